/** Long work in progress: a visible bar and a polite announcement for screen readers. */
export function Busy({ label, value, max }: { label: string; value?: number; max?: number }) {
  return (
    <div role="status" aria-live="polite" class="row">
      <progress aria-label={label} value={value} max={max} />
      <span class="muted">{label}</span>
    </div>
  );
}
