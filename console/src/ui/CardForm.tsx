import type { ComponentChildren } from 'preact';

/**
 * A form in a card, titled by its heading (which also names it for screen readers). The browser's
 * own submit (a button, Enter) hands the form element to `onSubmit`; the page does not reload.
 */
export function CardForm(props: {
  title: string;
  onSubmit(form: HTMLFormElement): void;
  children: ComponentChildren;
}) {
  return (
    <form
      class="card"
      aria-label={props.title}
      onSubmit={(event) => {
        event.preventDefault();
        props.onSubmit(event.currentTarget);
      }}
    >
      <h2>{props.title}</h2>
      {props.children}
    </form>
  );
}
