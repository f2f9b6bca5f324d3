/**
 * Times as a datetime-local input shows them (the reader's time zone, to the minute) and as the API takes
 * them (RFC 3339 in UTC): the backfill dialog's window and the runs list's started range.
 */

/** A time as a datetime-local input shows it: local, to the minute. */
export function localInput(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** A datetime-local value (the reader's time zone) as RFC 3339 in UTC; undefined when it is not a time. */
export function fromLocalInput(value: string): string | undefined {
  const date = new Date(value);
  return value === '' || Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}
