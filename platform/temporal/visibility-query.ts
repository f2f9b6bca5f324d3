/** A string literal in a Temporal visibility (list filter) query, quotes escaped. */
export function visibilityString(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}
