/**
 * The backfill of a schedule (POST /v1/workflows/{id}/schedule/backfill): a dialog that asks for a past
 * window in the reader's time zone, starts the runs the schedule would have started in it, and stays open
 * with the service's answer when it refuses (a window of more than 1,000 runs, an end in the future).
 */
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { fromLocalInput, localInput } from '../local-time';
import { useAction } from '../use-action';
import { ConfirmDialog } from './dialog';
import { ErrorNotice } from './feedback';
import { TextField } from './form-panel';

/** A datetime-local value (the reader's time zone) as RFC 3339 in UTC, or why it cannot be sent. */
function rfc3339(value: string, field: string): string {
  const time = fromLocalInput(value);
  if (time === undefined) throw new Error(`Enter the ${field} date and time.`);
  return time;
}

export function BackfillDialog({
  workflowId,
  open,
  onClose,
  onStarted,
}: {
  workflowId: string;
  open: boolean;
  onClose: () => void;
  /** After the service accepted: how many runs start. */
  onStarted: (count: number) => unknown;
}) {
  const action = useAction();
  const [start, setStart] = useState('');
  const [end, setEnd] = useState('');
  // Each opening proposes the last hour, up to this minute.
  useEffect(() => {
    if (!open) return;
    const now = new Date();
    now.setSeconds(0, 0);
    setEnd(localInput(now));
    setStart(localInput(new Date(now.getTime() - 3_600_000)));
  }, [open]);

  const confirm = () =>
    void action.run(async () => {
      const window = { start: rfc3339(start, 'start'), end: rfc3339(end, 'end') };
      const accepted = await api.workflows.schedule.backfill(workflowId, window);
      onClose();
      await onStarted(accepted.count);
    });

  return (
    <ConfirmDialog
      open={open}
      title="Backfill past runs"
      confirmLabel="Start backfill"
      busy={action.busy}
      onConfirm={confirm}
      onCancel={onClose}
    >
      <p class="hint">
        Starts every run the schedule would have started from the start up to, not including, the end (at most
        1,000), even while it is paused. Times are in your time zone.
      </p>
      <div class="field">
        <TextField id="backfill-start" label="Start" type="datetime-local" value={start} onValue={setStart} />
      </div>
      <div class="field">
        <TextField id="backfill-end" label="End" type="datetime-local" value={end} onValue={setEnd} />
      </div>
      <ErrorNotice error={action.error} title="Could not backfill" />
    </ConfirmDialog>
  );
}
