/** Human output of the CLI: aligned tables and short durations. */

/** `1234` → `1.23 s`, `420` → `420 ms`, `null` → `-`. */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '-';
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(2)} s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms % 60_000) / 1000);
  return `${minutes} min ${seconds} s`;
}

/**
 * A step's STATUS cell: its status, and until when a sleeping step sleeps, or which event a wait_for_event
 * step waits for and until when (its timeout).
 */
export function stepStatus(step: {
  status: string;
  waiting_for?: { type: string; event?: string; until: string };
}): string {
  const waitingFor = step.waiting_for;
  if (!waitingFor) return step.status;
  const what = waitingFor.type === 'event' && waitingFor.event ? ` for event ${waitingFor.event}` : '';
  return `${step.status}${what} until ${waitingFor.until}`;
}

/** A line of a table printed as it is, outside the columns (a note between rows). */
export interface Note {
  note: string;
}

/** A table with a header row, columns padded to their widest cell; notes do not widen a column. */
export function table(headers: readonly string[], rows: readonly (readonly unknown[] | Note)[]): string {
  const cells = [headers.map(String), ...rows.map((row) => ('note' in row ? row : row.map(cell)))];
  const widths = headers.map((_, column) =>
    Math.max(...cells.map((row) => ('note' in row ? 0 : (row[column] ?? '').length))),
  );
  return cells
    .map((row) =>
      'note' in row
        ? row.note
        : row
            .map((value, column) => (column === row.length - 1 ? value : value.padEnd(widths[column] ?? 0)))
            .join('  ')
            .trimEnd(),
    )
    .join('\n');
}

function cell(value: unknown): string {
  if (value === null || value === undefined || value === '') return '-';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}
