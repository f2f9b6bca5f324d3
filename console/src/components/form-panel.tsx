/**
 * A form that creates or changes one thing (a key, a secret, an endpoint): its heading names it for
 * assistive technology, its action's error shows above the buttons, and the submit button is disabled and
 * says so ("Creating…") while the action runs.
 */
import type { ComponentChildren, JSX } from 'preact';
import { useId } from 'preact/hooks';
import type { Action } from '../use-action';
import { ErrorNotice } from './feedback';

export function FormPanel({
  title,
  level = 2,
  class: formClass = 'panel',
  action,
  onSubmit,
  errorTitle,
  submitLabel,
  busyLabel,
  ready = true,
  buttons,
  children,
}: {
  title: ComponentChildren;
  /** The heading's level in the page's outline. */
  level?: 2 | 3;
  class?: string;
  action: Action;
  onSubmit: () => Promise<void>;
  errorTitle: string;
  submitLabel: string;
  busyLabel: string;
  /** Whether the fields are filled in enough to submit. */
  ready?: boolean;
  /** Buttons after the submit button (Cancel, Close). */
  buttons?: ComponentChildren;
  /** The fields. */
  children: ComponentChildren;
}) {
  const titleId = useId();
  const Heading = level === 3 ? 'h3' : 'h2';
  return (
    <form class={formClass} onSubmit={action.onSubmit(onSubmit)} aria-labelledby={titleId}>
      <Heading id={titleId}>{title}</Heading>
      {children}
      <ErrorNotice error={action.error} title={errorTitle} />
      <div class="actions">
        <button type="submit" class="primary" disabled={action.busy || !ready}>
          {action.busy ? busyLabel : submitLabel}
        </button>
        {buttons}
      </div>
    </form>
  );
}

/** A labelled text input; `onValue` gets what is typed. The other attributes go to the <input>. */
export function TextField({
  id,
  label,
  onValue,
  ...input
}: {
  id: string;
  label: string;
  onValue: (value: string) => void;
} & Omit<JSX.InputHTMLAttributes<HTMLInputElement>, 'id' | 'onInput'>) {
  return (
    <>
      <label for={id}>{label}</label>
      <input id={id} {...input} onInput={(e) => onValue(e.currentTarget.value)} />
    </>
  );
}
