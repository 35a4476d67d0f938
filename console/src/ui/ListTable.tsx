import type { ComponentChildren } from 'preact';
import { Busy } from './Busy.tsx';
import { EmptyState } from './EmptyState.tsx';
import { TableScroll } from './TableScroll.tsx';
import type { Resource } from './use-resource.ts';

/**
 * A loaded list as a table: "Loading …" until its first answer, then a caption, a header of
 * `columns` and a row per item, scrolling sideways on a narrow screen; an empty list says what it
 * would show and how to get something there (`empty`) instead of an empty table.
 */
export function ListTable<T>(props: {
  /** What the list is, for the table's region and its loading line ("Budgets"). */
  label: string;
  list: Resource<T[] | undefined>;
  caption: (items: T[]) => ComponentChildren;
  columns: readonly string[];
  row: (item: T) => ComponentChildren;
  /** Shown instead of the table when the list is empty: what it would list, and how to add one. */
  empty?: { what: string; how?: ComponentChildren };
}) {
  const { label, list } = props;
  if (!list.data) return list.loading ? <Busy label={`Loading ${label.toLowerCase()}`} /> : null;
  if (list.data.length === 0)
    return <EmptyState {...(props.empty ?? { what: `No ${label.toLowerCase()} yet.` })} />;
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
