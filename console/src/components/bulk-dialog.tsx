/**
 * A bulk operation asked about first: the dialog counts the runs it would act on (POST /v1/bulk-operations
 * with `dry_run: true`, which changes nothing) and names some of them, takes the action's option (a retry's
 * corrected input, a rerun's version), and starts it once confirmed. A refusal (a filter with no field, one
 * that matches too many runs, too many operations running) stays in the dialog with the service's answer.
 */
import type {
  BulkOperationAccepted,
  BulkOperationDryRun,
  BulkOperationRequest,
} from '@switchyard/client/browser';
import { useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { api } from '../api';
import { useAction } from '../use-action';
import { useAsync } from '../use-async';
import type { InputProblem } from '../validate-input';
import { Choices } from './choices';
import { ConfirmDialog } from './dialog';
import { ErrorNotice, Loading } from './feedback';
import { InputProblems } from './input-problems';

export type BulkAction = BulkOperationRequest['action'];
export type BulkFilter = BulkOperationRequest['filter'];
type Version = 'same' | 'latest';

const VERBS: Record<BulkAction, string> = { cancel: 'Cancel', retry: 'Retry', rerun: 'Rerun' };

/** Which runs qualify; the others are counted as skipped. */
const QUALIFY: Record<BulkAction, string> = {
  cancel: 'Running and waiting runs are canceled; the others are skipped.',
  retry: 'Failed runs run again from their failed step; the others are skipped.',
  rerun: 'Each run starts again as a new run with the same input.',
};

const runs = (n: number) => `${n} run${n === 1 ? '' : 's'}`;

/** The corrected input as typed: nothing (none sent), an object, or why it is not one. */
function parseInput(text: string): { input?: Record<string, unknown>; problem?: InputProblem } {
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (caught) {
    return { problem: { path: '/', message: `is not JSON: ${(caught as Error).message}` } };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { problem: { path: '/', message: 'must be a JSON object' } };
  return { input: value as Record<string, unknown> };
}

export function BulkDialog({
  action,
  filter,
  target,
  open,
  onClose,
  onStarted,
}: {
  action: BulkAction;
  filter: BulkFilter;
  /** The runs in words: "every run matching workflow onboard, status failed", "the 3 selected runs". */
  target: string;
  open: boolean;
  onClose: () => void;
  onStarted: (id: string) => unknown;
}) {
  const starting = useAction();
  const [inputText, setInputText] = useState('');
  const [problems, setProblems] = useState<InputProblem[]>([]);
  const [version, setVersion] = useState<Version>('same');
  const filterKey = JSON.stringify(filter);

  // Each opening counts again (the parent gives each opening its own key, so the fields start empty).
  const count = useAsync(
    async () =>
      open
        ? ((await api.bulkOperations.create({ action, filter, dry_run: true })) as BulkOperationDryRun)
        : null,
    [open, action, filterKey],
  );
  const matched = count.data?.matched;
  const confirm = () => {
    const parsed = action === 'retry' ? parseInput(inputText) : {};
    setProblems(parsed.problem ? [parsed.problem] : []);
    if (parsed.problem) return;
    const request: BulkOperationRequest =
      action === 'retry'
        ? { action, filter, ...(parsed.input && { input: parsed.input }) }
        : action === 'rerun'
          ? { action, filter, version }
          : { action, filter };
    void starting.run(async () => {
      const accepted = (await api.bulkOperations.create(request)) as BulkOperationAccepted;
      onClose();
      await onStarted(accepted.id);
    });
  };

  return (
    <ConfirmDialog
      open={open}
      title={`${VERBS[action]} runs`}
      confirmLabel={matched === undefined ? VERBS[action] : `${VERBS[action]} ${runs(matched)}`}
      dismissLabel="Close"
      danger={action === 'cancel'}
      busy={starting.busy}
      ready={matched !== undefined && matched > 0}
      onConfirm={confirm}
      onCancel={onClose}
    >
      <p>
        {VERBS[action]} {target}. {QUALIFY[action]}
      </p>
      {count.loading && <Loading label="Counting the runs (a dry run, which changes nothing)…" />}
      <ErrorNotice error={count.error} title="The service refused this bulk operation" />
      {count.data && (
        <div data-testid="bulk-dry-run">
          <p>
            <strong data-testid="bulk-matched">{runs(count.data.matched)}</strong> match now
            {count.data.matched === 0 ? ': nothing to do.' : '.'}
          </p>
          {count.data.sample.length > 0 && (
            <>
              <p class="hint">
                {count.data.sample.length < count.data.matched ? 'The first of them:' : 'They are:'}
              </p>
              <ul class="sample" aria-label="Sample of the matching runs">
                {count.data.sample.map((id) => (
                  <li key={id}>
                    <Link href={`/runs/${encodeURIComponent(id)}`} class="mono">
                      {id}
                    </Link>
                  </li>
                ))}
              </ul>
            </>
          )}
        </div>
      )}
      {action === 'retry' && (
        <>
          <label for="bulk-input">Corrected input (JSON, optional; the same for every run)</label>
          <textarea
            id="bulk-input"
            rows={4}
            spellcheck={false}
            placeholder="Leave empty to retry with each run's own input"
            value={inputText}
            onInput={(event) => setInputText(event.currentTarget.value)}
            aria-invalid={problems.length > 0}
            aria-describedby={problems.length > 0 ? 'bulk-input-problems' : undefined}
          />
          <InputProblems problems={problems} id="bulk-input-problems" />
        </>
      )}
      {action === 'rerun' && (
        <Choices
          legend="Version"
          type="radio"
          name="bulk-version"
          options={['same', 'latest'] as const}
          checked={(option) => option === version}
          onChange={(option, on) => on && setVersion(option)}
          hint={(option) => (option === 'same' ? ': the version each run ran' : ": the workflow's latest")}
        />
      )}
      <ErrorNotice error={starting.error} title="Could not start the bulk operation" />
    </ConfirmDialog>
  );
}
