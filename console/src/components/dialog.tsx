/**
 * A confirmation in a modal <dialog>: the browser keeps focus inside it, Escape cancels, and focus
 * returns to the button that opened it.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import type { Action } from '../use-action';

/** What opens, closes and answers a ConfirmDialog: `useConfirmed` makes it. */
export interface ConfirmDialogState {
  open: boolean;
  busy?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}

export function ConfirmDialog({
  open,
  title,
  children,
  confirmLabel,
  dismissLabel = 'Cancel',
  danger = false,
  busy = false,
  ready = true,
  onConfirm,
  onCancel,
}: ConfirmDialogState & {
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  /** The button that closes it unconfirmed ("Close" where "Cancel" would name the action). */
  dismissLabel?: string;
  danger?: boolean;
  /** Whether there is something to confirm yet (a count that has arrived). */
  ready?: boolean;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);
  return (
    <dialog
      ref={ref}
      aria-labelledby={titleId}
      onCancel={(e) => {
        e.preventDefault();
        onCancel();
      }}
    >
      <h2 id={titleId}>{title}</h2>
      <div class="dialog-body">{children}</div>
      <div class="actions">
        <button type="button" onClick={onCancel} disabled={busy}>
          {dismissLabel}
        </button>
        <button
          type="button"
          class={danger ? 'danger' : 'primary'}
          onClick={onConfirm}
          disabled={busy || !ready}
        >
          {busy ? 'Working…' : confirmLabel}
        </button>
      </div>
    </dialog>
  );
}

/**
 * An action on one thing that a ConfirmDialog asks about first (a key to revoke, a run to cancel): `ask`
 * opens the dialog about it, `asking` is what it asks about. Confirming runs `perform` through `action`;
 * when it succeeds the dialog closes and `then` runs (a notice, a reload); when it fails the dialog closes
 * and the error is `action.error`.
 */
export function useConfirmed<T>(
  action: Action,
  perform: (target: T) => Promise<unknown>,
  then: (target: T) => unknown,
): { asking: T | null; ask: (target: T) => void; dialog: ConfirmDialogState } {
  const [asking, setAsking] = useState<T | null>(null);
  const close = () => setAsking(null);
  const confirm = () => {
    const target = asking;
    if (target === null) return;
    void action.run(async () => {
      await perform(target);
      close();
      await then(target);
    }, close);
  };
  return {
    asking,
    ask: (target) => setAsking(() => target),
    dialog: { open: asking !== null, busy: action.busy, onConfirm: confirm, onCancel: close },
  };
}
