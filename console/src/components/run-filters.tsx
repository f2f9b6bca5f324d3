/**
 * The runs list's filters: workflow and status at once, an error code when the field is left or Enter is
 * pressed, and a start-time range in the reader's time zone (the address keeps RFC 3339).
 */
import { EXECUTION_STATUSES } from '@switchyard/client/browser';
import { useEffect, useState } from 'preact/hooks';
import { fromLocalInput, localInput } from '../local-time';
import type { RunFilter, RunFilterField } from '../run-filter';

export function RunFilters({
  filter,
  workflowIds,
  onChange,
}: {
  filter: RunFilter;
  /** The workflows to offer (the one in the address is offered too). */
  workflowIds: readonly string[];
  /** A field changed; an empty value removes it. */
  onChange: (field: RunFilterField, value: string) => void;
}) {
  const workflow = filter.workflow ?? '';
  return (
    <form class="filters" aria-label="Filter runs" onSubmit={(e) => e.preventDefault()}>
      <div class="field">
        <label for="filter-workflow">Workflow</label>
        <select
          id="filter-workflow"
          value={workflow}
          onChange={(e) => onChange('workflow', e.currentTarget.value)}
        >
          <option value="">All workflows</option>
          {workflow && !workflowIds.includes(workflow) && <option value={workflow}>{workflow}</option>}
          {workflowIds.map((id) => (
            <option key={id} value={id}>
              {id}
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for="filter-status">Status</label>
        <select
          id="filter-status"
          value={filter.status ?? ''}
          onChange={(e) => onChange('status', e.currentTarget.value)}
        >
          <option value="">Any status</option>
          {EXECUTION_STATUSES.map((s) => (
            <option key={s} value={s}>
              {s.replace('_', ' ')}
            </option>
          ))}
        </select>
      </div>
      <ErrorCodeFilter value={filter.error_code ?? ''} onApply={(code) => onChange('error_code', code)} />
      <TimeFilter
        id="filter-started-after"
        label="Started at or after"
        value={filter.started_after}
        onApply={(time) => onChange('started_after', time)}
      />
      <TimeFilter
        id="filter-started-before"
        label="Started before"
        value={filter.started_before}
        onApply={(time) => onChange('started_before', time)}
      />
    </form>
  );
}

/** The error code filter: sent when the field is left or Enter is pressed, not at every keystroke. */
function ErrorCodeFilter({ value, onApply }: { value: string; onApply: (code: string) => void }) {
  const [draft, setDraft] = useState(value);
  useEffect(() => setDraft(value), [value]);
  const apply = () => {
    if (draft.trim() !== value) onApply(draft.trim());
  };
  return (
    <div class="field">
      <label for="filter-error-code">Error code</label>
      <input
        id="filter-error-code"
        type="text"
        placeholder="connector_http_error"
        spellcheck={false}
        value={draft}
        onInput={(e) => setDraft(e.currentTarget.value)}
        onChange={apply}
        onKeyDown={(e) => {
          if (e.key === 'Enter') apply();
        }}
      />
    </div>
  );
}

/** A start-time bound, in the reader's time zone; the address keeps it in RFC 3339. */
function TimeFilter({
  id,
  label,
  value,
  onApply,
}: {
  id: string;
  label: string;
  value: string | undefined;
  onApply: (time: string) => void;
}) {
  const date = value ? new Date(value) : undefined;
  const shown = date && !Number.isNaN(date.getTime()) ? localInput(date) : '';
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input
        id={id}
        type="datetime-local"
        value={shown}
        onChange={(e) => onApply(fromLocalInput(e.currentTarget.value) ?? '')}
      />
    </div>
  );
}
