/**
 * The schedule of a workflow with a schedule trigger, on its page (GET /v1/workflows/{id}/schedule): what it
 * runs and when, whether it is paused and why, its next five times and its recent runs (each a link to the
 * run), and for a key that may write: pause (with a note) or resume, run now, and backfill a past window.
 */
import type { Schedule } from '@switchyard/client/browser';
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { api } from '../api';
import { formatTime } from '../format';
import { useCan } from '../session';
import { useAction } from '../use-action';
import { useAsync } from '../use-async';
import { BackfillDialog } from './backfill-dialog';
import { DataTable } from './data-table';
import { Fact } from './facts';
import { Empty, ErrorNotice, Loading, Success } from './feedback';
import { TextField } from './form-panel';

/** Runs appear in the schedule's recent runs about a second after they start. */
const LISTED_AFTER_MS = 2_000;

function specText(schedule: Schedule): string {
  return 'cron' in schedule.spec ? `cron ${schedule.spec.cron}` : `every ${schedule.spec.every}`;
}

export function SchedulePanel({ workflowId }: { workflowId: string }) {
  const schedule = useAsync(() => api.workflows.schedule.get(workflowId), [workflowId]);
  const canWrite = useCan('write');
  const action = useAction();
  const [note, setNote] = useState('');
  const [notice, setNotice] = useState<ComponentChildren>(null);
  const [backfilling, setBackfilling] = useState(false);
  const shown = schedule.data;

  /** Reads the schedule again now, and once more when new runs have reached its recent runs. */
  const refresh = async () => {
    await schedule.reload();
    setTimeout(() => void schedule.reload(), LISTED_AFTER_MS);
  };
  /** An action's work: the call, then its notice (`done` of the answer) and the schedule read again. */
  const changing =
    <T,>(call: () => Promise<T>, done: (answer: T) => ComponentChildren) =>
    async () => {
      setNotice(null);
      setNotice(done(await call()));
      await refresh();
    };
  const resume = changing(
    () => api.workflows.schedule.resume(workflowId),
    () => 'The schedule runs again.',
  );
  const pause = changing(
    async () => {
      await api.workflows.schedule.pause(workflowId, note.trim() ? { note: note.trim() } : {});
      setNote('');
    },
    () => 'The schedule is paused.',
  );
  const runNow = changing(
    () => api.workflows.schedule.run(workflowId),
    ({ execution_id: id }) => (
      <>
        Started{' '}
        <Link href={`/runs/${encodeURIComponent(id)}`} class="mono">
          {id}
        </Link>
        .
      </>
    ),
  );

  return (
    <section class="panel" aria-labelledby="schedule-title" data-testid="schedule-panel">
      <h2 id="schedule-title">Schedule</h2>
      <ErrorNotice error={schedule.error} title="Could not read the schedule" />
      {schedule.loading && !shown && <Loading label="Loading the schedule…" />}
      {shown && (
        <>
          <dl class="facts">
            <Fact term="Runs" mono>
              {specText(shown)}
            </Fact>
            <Fact term="Time zone">{shown.timezone}</Fact>
            <Fact term="Overlap">{shown.overlap.replace('_', ' ')}</Fact>
            <Fact term="State">
              <span
                class={`badge ${shown.paused ? 'status-disabled' : 'status-enabled'}`}
                data-testid="schedule-state"
              >
                {shown.paused ? 'paused' : 'active'}
              </span>
            </Fact>
            {shown.note && <Fact term="Note">{shown.note}</Fact>}
          </dl>
          <h3>Next runs</h3>
          {shown.paused ? (
            <p class="hint">None while the schedule is paused.</p>
          ) : (
            <ol data-testid="next-runs">
              {shown.next_runs.map((time) => (
                <li key={time}>
                  <time dateTime={time}>{formatTime(time)}</time>
                </li>
              ))}
            </ol>
          )}
          <h3>Recent runs</h3>
          {shown.recent_runs.length === 0 ? (
            <Empty>No runs of this schedule yet.</Empty>
          ) : (
            <DataTable label="Recent runs of the schedule" columns={['Run', 'Scheduled for']}>
              {shown.recent_runs.map((run) => (
                <tr key={run.execution_id} data-testid="schedule-run">
                  <td>
                    <Link href={`/runs/${encodeURIComponent(run.execution_id)}`} class="mono">
                      {run.execution_id}
                    </Link>
                  </td>
                  <td>{formatTime(run.scheduled_at)}</td>
                </tr>
              ))}
            </DataTable>
          )}
          {canWrite && (
            <>
              {notice && <Success>{notice}</Success>}
              <ErrorNotice error={action.error} title="The schedule action failed" />
              {shown.paused ? (
                <div class="actions">
                  <button
                    type="button"
                    class="primary"
                    disabled={action.busy}
                    onClick={() => void action.run(resume)}
                  >
                    Resume schedule
                  </button>
                </div>
              ) : (
                <form onSubmit={action.onSubmit(pause)}>
                  <div class="field">
                    <TextField
                      id="pause-note"
                      label="Pause note (optional)"
                      type="text"
                      maxLength={500}
                      value={note}
                      onValue={setNote}
                    />
                  </div>
                  <div class="actions">
                    <button type="submit" disabled={action.busy}>
                      Pause schedule
                    </button>
                  </div>
                </form>
              )}
              <div class="actions">
                <button type="button" disabled={action.busy} onClick={() => void action.run(runNow)}>
                  Run now
                </button>
                <button type="button" disabled={action.busy} onClick={() => setBackfilling(true)}>
                  Backfill…
                </button>
              </div>
              <BackfillDialog
                workflowId={workflowId}
                open={backfilling}
                onClose={() => setBackfilling(false)}
                onStarted={async (count) => {
                  setNotice(`Backfill started: ${count} run${count === 1 ? '' : 's'}.`);
                  await refresh();
                }}
              />
            </>
          )}
        </>
      )}
    </section>
  );
}
