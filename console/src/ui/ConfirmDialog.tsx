import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

/**
 * A modal question (native `<dialog>`: focus is trapped and Escape cancels). `onConfirm` runs when
 * the user confirms; the dialog closes either way.
 */
export function ConfirmDialog(props: {
  open: boolean;
  title: string;
  children?: ComponentChildren;
  confirmLabel: string;
  danger?: boolean;
  onConfirm(): void;
  onClose(): void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const element = dialog.current;
    if (!element) return;
    if (props.open && !element.open) element.showModal();
    if (!props.open && element.open) element.close();
  }, [props.open]);
  return (
    <dialog ref={dialog} aria-labelledby="confirm-title" onClose={props.onClose}>
      <h2 id="confirm-title">{props.title}</h2>
      {props.children}
      <form method="dialog" class="row">
        <button type="submit" value="cancel">
          Cancel
        </button>
        <button
          type="button"
          class={props.danger ? 'primary danger' : 'primary'}
          onClick={() => {
            props.onConfirm();
            dialog.current?.close();
          }}
        >
          {props.confirmLabel}
        </button>
      </form>
    </dialog>
  );
}

/**
 * A question about one item at a time (the row whose Remove was pressed): `ask(item)` opens the
 * dialog, confirming hands that item to `onConfirm`. Spread `dialog` into a `ConfirmDialog`.
 */
export function useConfirmation<T>(onConfirm: (item: T) => void) {
  const [asking, setAsking] = useState<{ item: T } | undefined>(undefined);
  return {
    item: asking?.item,
    ask: (item: T) => setAsking({ item }),
    dialog: {
      open: asking !== undefined,
      onClose: () => setAsking(undefined),
      onConfirm: () => {
        if (asking) onConfirm(asking.item);
      },
    },
  };
}
