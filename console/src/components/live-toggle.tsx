/** The "Live refresh" switch of a page that polls while it is on (runs, a webhook's deliveries). */
import type { ComponentChildren } from 'preact';

export function LiveToggle({
  id,
  live,
  onChange,
  children,
}: {
  id: string;
  live: boolean;
  onChange: (live: boolean) => void;
  /** Said after the label (that a refresh is under way). */
  children?: ComponentChildren;
}) {
  return (
    <div class="live">
      <input id={id} type="checkbox" checked={live} onChange={(e) => onChange(e.currentTarget.checked)} />
      <label for={id}>Live refresh</label>
      {children}
    </div>
  );
}
