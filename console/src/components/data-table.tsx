/**
 * A table in a region that scrolls sideways on narrow screens: the region is named and takes focus, so a
 * keyboard can scroll it (the same for every table of the console).
 */
import type { ComponentChildren } from 'preact';

export function DataTable({
  label,
  columns,
  actions = false,
  leading,
  class: tableClass,
  children,
}: {
  /** Names the region for assistive technology ("Runs table"). */
  label: string;
  /** The column headings. */
  columns: readonly string[];
  /** Whether a last column holds each row's buttons (its heading is for screen readers only). */
  actions?: boolean;
  /** A first heading cell before the columns (the runs list's "select all" checkbox). */
  leading?: ComponentChildren;
  class?: string;
  /** The rows. */
  children: ComponentChildren;
}) {
  return (
    <div class="table-scroll" tabIndex={0} role="region" aria-label={label}>
      <table class={tableClass}>
        <thead>
          <tr>
            {leading !== undefined && (
              <th scope="col" class="select-cell">
                {leading}
              </th>
            )}
            {columns.map((column) => (
              <th scope="col" key={column}>
                {column}
              </th>
            ))}
            {actions && (
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

/** A row's button, named for the row it acts on ("Revoke ci-deploy") where its column has no heading. */
export function RowButton({
  label,
  item,
  danger = false,
  onClick,
}: {
  label: string;
  /** The row's name, said after the label by screen readers. */
  item: string;
  danger?: boolean;
  onClick: () => void;
}) {
  return (
    <button type="button" class={danger ? 'danger' : undefined} onClick={onClick}>
      {label}
      <span class="sr-only"> {item}</span>
    </button>
  );
}
