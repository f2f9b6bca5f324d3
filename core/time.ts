/**
 * RFC 3339 times as definitions give them (a sleep's `until`): strict, unlike `Date.parse`, which takes
 * "2026-02-30" for March 2nd and many formats RFC 3339 does not have. Pure.
 */

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** Days in `month` (1-12) of `year`. */
function daysIn(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/**
 * The epoch milliseconds of an RFC 3339 date-time ("2026-12-01T09:00:00Z", "2026-12-01T10:00:00.5+01:00"),
 * or undefined when `text` is not one (a leap second, 60, is not taken: JavaScript time has none).
 */
export function parseRfc3339(text: string): number | undefined {
  const match = RFC3339.exec(text);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  const fraction = match[7] ? Math.floor(Number(`0${match[7]}`) * 1000) : 0;
  let offsetMinutes = 0;
  if (!match[8]) {
    const hours = Number(match[10]);
    const minutes = Number(match[11]);
    if (hours > 23 || minutes > 59) return undefined;
    offsetMinutes = (match[9] === '-' ? -1 : 1) * (hours * 60 + minutes);
  }
  const utc = Date.UTC(year, month - 1, day, hour, minute, second, fraction);
  // Date.UTC maps years 0-99 to 1900-1999.
  const shifted = year < 100 ? new Date(utc).setUTCFullYear(year) : utc;
  return shifted - offsetMinutes * 60_000;
}
