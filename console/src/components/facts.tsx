/** One entry of a `<dl class="facts">` (a run's, a step's, an endpoint's facts): a term and its value. */
import type { ComponentChildren } from 'preact';

export function Fact({
  term,
  mono = false,
  children,
}: {
  term: string;
  /** Ids and other machine values, in the monospace font. */
  mono?: boolean;
  children: ComponentChildren;
}) {
  return (
    <div>
      <dt>{term}</dt>
      <dd class={mono ? 'mono' : undefined}>{children}</dd>
    </div>
  );
}
