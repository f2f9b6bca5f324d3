/**
 * Definition durations ("500ms", "30s", "15m", "72h", "7d") and their bounds, written as regular
 * expressions so that the JSON Schema of the OpenAPI document states exactly what the service accepts
 * (a step timeout of at most 24 h, a schedule interval of at least a minute).
 */

const UNITS = [
  ['ms', 1],
  ['s', 1000],
  ['m', 60_000],
  ['h', 3_600_000],
  ['d', 86_400_000],
] as const;

/** Digits of a duration's number, at most (DURATION_PATTERN). */
const MAX_DIGITS = 9;

/** A regular expression (no anchors) for the integers 1 to `max`, written without leading zeros. */
export function integersUpTo(max: number): string {
  const digits = String(max);
  const alternatives: string[] = [];
  // Every shorter length in full.
  if (digits.length > 1)
    alternatives.push(digits.length === 2 ? '[1-9]' : `[1-9][0-9]{0,${digits.length - 2}}`);
  // Same length: a prefix of max, then a smaller digit, then anything; or max itself.
  for (let i = 0; i < digits.length; i++) {
    const digit = Number(digits[i]);
    const low = i === 0 ? 1 : 0;
    if (digit - 1 < low) continue;
    const rest = digits.length - i - 1;
    const range = digit - 1 === low ? String(low) : `[${low}-${digit - 1}]`;
    alternatives.push(`${digits.slice(0, i)}${range}${rest > 0 ? `[0-9]{${rest}}` : ''}`);
  }
  alternatives.push(digits);
  return alternatives.join('|');
}

/** A duration of at most `maxMs` (and of at most MAX_DIGITS digits), as an anchored pattern. */
export function durationAtMostPattern(maxMs: number): RegExp {
  const parts = UNITS.map(([unit, ms]) => {
    const max = Math.min(Math.floor(maxMs / ms), 10 ** MAX_DIGITS - 1);
    return max >= 1 ? `(${integersUpTo(max)})${unit}` : undefined;
  }).filter((part) => part !== undefined);
  return new RegExp(`^(${parts.join('|')})$`);
}
