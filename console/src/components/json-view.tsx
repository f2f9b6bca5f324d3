/**
 * A collapsible JSON viewer: objects and arrays are <details> (keyboard: Tab to a summary, Enter or Space
 * to open it), rendered only once opened, so a run with hundreds of steps costs nothing until read.
 */
import { useState } from 'preact/hooks';
import { formatJson } from '../format';

const INLINE_LIMIT = 60;

function Scalar({ value }: { value: unknown }) {
  if (value === null) return <span class="json-null">null</span>;
  switch (typeof value) {
    case 'string':
      return <span class="json-string">{JSON.stringify(value)}</span>;
    case 'number':
      return <span class="json-number">{String(value)}</span>;
    case 'boolean':
      return <span class="json-boolean">{String(value)}</span>;
    default:
      return <span class="json-null">{typeof value}</span>;
  }
}

function summary(value: object): string {
  if (Array.isArray(value)) return `[${value.length} item${value.length === 1 ? '' : 's'}]`;
  const keys = Object.keys(value).length;
  return `{${keys} key${keys === 1 ? '' : 's'}}`;
}

function Node({ name, value, open: initiallyOpen }: { name?: string; value: unknown; open?: boolean }) {
  const [open, setOpen] = useState(initiallyOpen ?? false);
  const label = name !== undefined && <span class="json-key">{name}: </span>;
  if (value === null || typeof value !== 'object') {
    return (
      <div class="json-leaf">
        {label}
        <Scalar value={value} />
      </div>
    );
  }
  const entries: [string, unknown][] = Array.isArray(value)
    ? value.map((item, index) => [String(index), item])
    : Object.entries(value);
  if (entries.length === 0) {
    return (
      <div class="json-leaf">
        {label}
        <span class="json-null">{Array.isArray(value) ? '[]' : '{}'}</span>
      </div>
    );
  }
  const preview = formatJson(value).replace(/\s+/g, ' ');
  return (
    <details class="json-node" open={open} onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>
        {label}
        <span class="json-summary">{!open && preview.length <= INLINE_LIMIT ? preview : summary(value)}</span>
      </summary>
      {open && (
        <div class="json-children">
          {entries.map(([key, child]) => (
            <Node key={key} name={key} value={child} />
          ))}
        </div>
      )}
    </details>
  );
}

/** `label` names the value for assistive technology ("Input of step route"). */
export function JsonView({ value, label, open = true }: { value: unknown; label: string; open?: boolean }) {
  return (
    <div class="json-view" role="group" aria-label={label}>
      <Node value={value} open={open} />
    </div>
  );
}
