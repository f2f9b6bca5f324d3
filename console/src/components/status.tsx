/** A status as a coloured label (the word is always there: colour is never the only signal). */
export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge status-${status}`}>{status.replace('_', ' ')}</span>;
}
