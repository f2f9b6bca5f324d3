/**
 * The runs page's bulk actions, for a key that may write: what they act on (the runs selected with the
 * rows' checkboxes, or every run matching the filter), cancel, retry or rerun them through a dialog that
 * counts them first, and the started operation's progress (docs/operations.md#bulk-operations).
 */
import { useState } from 'preact/hooks';
import { describeFilter, isEmptyFilter, type RunFilter } from '../run-filter';
import { BulkDialog, type BulkAction, type BulkFilter } from './bulk-dialog';
import { BulkProgress } from './bulk-progress';

/** Which runs an action takes: those selected, or (none selected, or "all matching") the filter's. */
export interface RunSelection {
  ids: ReadonlySet<string>;
  allMatching: boolean;
}

export function BulkActions({
  filter,
  selection,
  onSelectAllMatching,
  onClear,
  onFinished,
}: {
  filter: RunFilter;
  selection: RunSelection;
  onSelectAllMatching: () => void;
  onClear: () => void;
  /** When a started operation is no longer running: the list is read again. */
  onFinished: () => unknown;
}) {
  const [asking, setAsking] = useState<BulkAction | null>(null);
  const [last, setLast] = useState<BulkAction>('retry');
  const [opening, setOpening] = useState(0);
  const [operation, setOperation] = useState<string | null>(null);

  const byFilter = selection.allMatching || selection.ids.size === 0;
  const bulkFilter: BulkFilter = byFilter ? filter : { execution_ids: [...selection.ids] };
  const count = selection.ids.size;
  const target = byFilter
    ? isEmptyFilter(filter)
      ? 'every run (no filter is chosen)'
      : `every run matching ${describeFilter(filter)}`
    : `the ${count} selected run${count === 1 ? '' : 's'}`;

  const ask = (action: BulkAction) => {
    setLast(action);
    setOpening((n) => n + 1);
    setAsking(action);
  };

  return (
    <section class="panel bulk-actions" aria-labelledby="bulk-actions-title">
      <div class="bulk-bar">
        <h2 id="bulk-actions-title">Bulk actions</h2>
        <p data-testid="bulk-target">
          {selection.allMatching ? (
            <>All runs matching the filter are selected. </>
          ) : count > 0 ? (
            <>
              {count} run{count === 1 ? '' : 's'} selected.{' '}
            </>
          ) : (
            <>No run selected: an action takes every run matching the filter. </>
          )}
          {!selection.allMatching && count > 0 && !isEmptyFilter(filter) && (
            <button type="button" class="link" onClick={onSelectAllMatching}>
              Select all runs matching the filter
            </button>
          )}{' '}
          {(count > 0 || selection.allMatching) && (
            <button type="button" class="link" onClick={onClear}>
              Clear selection
            </button>
          )}
        </p>
        <div class="actions">
          <button type="button" onClick={() => ask('cancel')}>
            Cancel runs…
          </button>
          <button type="button" onClick={() => ask('retry')}>
            Retry runs…
          </button>
          <button type="button" onClick={() => ask('rerun')}>
            Rerun runs…
          </button>
        </div>
      </div>
      <BulkDialog
        key={opening}
        action={asking ?? last}
        filter={bulkFilter}
        target={target}
        open={asking !== null}
        onClose={() => setAsking(null)}
        onStarted={(id) => {
          setOperation(id);
          onClear();
        }}
      />
      {operation && <BulkProgress key={operation} id={operation} link onFinished={onFinished} />}
    </section>
  );
}
