import type { ComponentChildren } from 'preact';
import { Busy } from './Busy.tsx';
import { TableScroll } from './TableScroll.tsx';
import type { Resource } from './use-resource.ts';

/**
 * A loaded list as a table: "Loading …" until its first answer, then a caption, a header of
 * `columns` and a row per item, scrolling sideways on a narrow screen.
 */
export function ListTable<T>(props: {
  /** What the list is, for the table's region and its loading line ("Budgets"). */
  label: string;
  list: Resource<T[] | undefined>;
  caption: (items: T[]) => ComponentChildren;
  columns: readonly string[];
  row: (item: T) => ComponentChildren;
}) {
  const { label, list } = props;
  if (!list.data) return list.loading ? <Busy label={`Loading ${label.toLowerCase()}`} /> : null;
  return (
    <TableScroll label={label}>
      <table>
        <caption class="muted">{props.caption(list.data)}</caption>
        <thead>
          <tr>
            {props.columns.map((column) => (
              <th scope="col" key={column}>
                {column}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{list.data.map(props.row)}</tbody>
      </table>
    </TableScroll>
  );
}
