/** What the flow control suites share: a workflow that calls a receiver, and a call held until released. */
import { createWorkflow, definition, httpStep } from './fixtures';
import type { Receiver } from './receiver';
import type { ApiClient } from './stack';

/**
 * A workflow of one connector step, never retried, that calls `<receiver>/<prefix>/<input.customer>` with
 * `{n: input.n}`; `extra` is the definition's flow control (`concurrency`, `throttle`, `priority`).
 */
export async function callingWorkflow(
  api: ApiClient,
  receiver: Receiver,
  prefix: string,
  extra: Record<string, unknown>,
): Promise<string> {
  return createWorkflow(
    api,
    definition(
      [
        httpStep(
          'call',
          {
            method: 'POST',
            url: `${receiver.url}/${prefix}/{{ input.customer }}`,
            body: { n: '{{ input.n }}' },
          },
          { retry: { max_attempts: 1 } },
        ),
      ],
      extra,
    ),
  );
}

/** Holds the receiver's next call to `path` (its run keeps its place) until the returned function is called. */
export function holdNext(receiver: Receiver, path: string): () => void {
  let release!: () => void;
  const until = new Promise<void>((resolve) => (release = resolve));
  receiver.replyOnceTo(path, { status: 200, body: { held: true }, until });
  return release;
}
