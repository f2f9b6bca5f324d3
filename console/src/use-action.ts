/**
 * What a form or a button asks of the service: whether it is under way (`busy`, which disables the controls
 * and names the button "Saving…") and how it failed (`error`, shown with ErrorNotice). Every action of the
 * console goes through it, so they all clear the last error first and keep the new one the same way.
 */
import { useState } from 'preact/hooks';

export interface Action {
  busy: boolean;
  error: unknown;
  /** Runs `work`, busy meanwhile; when it throws, `onFailure` runs (to close a dialog) and its error is kept. */
  run: (work: () => Promise<void>, onFailure?: () => void) => Promise<void>;
  /** A form's submit handler: the form is not sent, `work` is run instead. */
  onSubmit: (work: () => Promise<void>) => (event: Event) => void;
}

export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);

  const run = async (work: () => Promise<void>, onFailure?: () => void) => {
    setBusy(true);
    setError(undefined);
    try {
      await work();
    } catch (caught) {
      onFailure?.();
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  const onSubmit = (work: () => Promise<void>) => (event: Event) => {
    event.preventDefault();
    void run(work);
  };

  return { busy, error, run, onSubmit };
}
