/**
 * The worked examples of docs/events.md run as printed. Onboarding
 * (#a-worked-example-onboarding-new-users): the definition saves, the event starts one run with the output
 * the page shows, a free signup starts nothing, and data without an email is refused with the error the
 * page shows. Waiting for an order's payment (#a-worked-example-waiting-for-an-orders-payment): its bash
 * block runs with the tutorial's helpers and prints every answer the page shows, and its definition, with a
 * short timeout, fails with the error the page shows.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { projectRoot } from '../../platform/paths';
import { runWithTutorialHelpers } from '../support/bash-script';
import { createWorkflow, trigger, waitForExecution } from '../support/fixtures';
import { fencedBlocks } from '../support/markdown';
import { startTestService, type TestService } from '../support/stack';
import { waitFor } from '../support/wait';

const PAGE = 'docs/events.md';

/** The one block of `file` marked `marker` (the comment before its fence). */
function markedBlock(file: string, marker: string): string {
  const blocks = fencedBlocks(fs.readFileSync(path.join(projectRoot, file), 'utf8')).filter((block) =>
    block.marker?.startsWith(marker),
  );
  expect(blocks, `blocks marked "${marker}" in ${file}`).to.have.length(1);
  return blocks[0]!.code;
}

/** The code of the page's block marked `<!-- events example: <part> ... -->`. */
function exampleBlock(part: string): string {
  return markedBlock(PAGE, `events example: ${part}`);
}

/** What stands for any value in an answer the page shows, and what it matches. */
const PLACEHOLDERS: [RegExp, string][] = [
  [/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/g, '\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z'],
  [/ex_\.\.\./g, 'ex_[A-Za-z0-9]+'],
  [/\.\.\./g, '.*?'],
];

/**
 * The answers a bash block shows, each a comment line `#   <answer>` after its command, as patterns of a
 * whole line: a time and `ex_...` stand for any time and execution id, `...` for anything.
 */
function shownAnswers(block: string): RegExp[] {
  return block
    .split('\n')
    .filter((line) => line.startsWith('#   '))
    .map((line) => {
      // Placeholders become control characters, the rest is escaped, then the control characters patterns.
      let text = line.slice(4).trim();
      PLACEHOLDERS.forEach(([shown], i) => (text = text.replace(shown, String.fromCharCode(1 + i))));
      let pattern = text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      PLACEHOLDERS.forEach(
        ([, matches], i) => (pattern = pattern.replaceAll(String.fromCharCode(1 + i), matches)),
      );
      return new RegExp(`^${pattern}$`, 'm');
    });
}

/** The execution error a wait_for_event's timeout gives, as #timeouts shows it. */
function timedOutBlock(): string {
  const blocks = fencedBlocks(fs.readFileSync(path.join(projectRoot, PAGE), 'utf8')).filter(
    (block) => block.lang === 'json' && block.code.includes('"event_timed_out"'),
  );
  expect(blocks, `the event_timed_out error of ${PAGE}`).to.have.length(1);
  return blocks[0]!.code;
}

/** The `"errors": [...]` block that follows the example (the read of refused data). */
function errorsBlock(): unknown {
  const block = fencedBlocks(fs.readFileSync(path.join(projectRoot, PAGE), 'utf8')).find((b) =>
    b.code.trimStart().startsWith('"errors"'),
  );
  expect(block, `the "errors" block of ${PAGE}`).to.not.equal(undefined);
  return (JSON.parse(`{${block!.code}}`) as { errors: unknown }).errors;
}

interface EventRead {
  started: string[];
  errors: unknown[];
}

describe('the events example of the docs @integration', function () {
  let service: TestService;
  before(async function () {
    this.timeout(120_000);
    service = await startTestService();
  });
  after(() => service?.stop());

  /** Sends an event and reads it once it has been acted on. */
  async function sendAndRead(event: Record<string, unknown>): Promise<EventRead> {
    const res = await service.api().post('/v1/events', event).expect(202);
    const [id] = res.body.ids as string[];
    await waitFor(async () => {
      const [row] = await service.runtime.services.db.query<{ done: boolean }>(
        'select dispatched_at is not null as done from events where id = $1',
        [id],
      );
      return row?.done;
    });
    return (await service.api().get(`/v1/events/${id}`).expect(200)).body as EventRead;
  }

  it('starts the onboarding run the page shows, and nothing for free or incomplete signups', async () => {
    const definition = JSON.parse(exampleBlock('definition')) as Record<string, unknown>;
    const event = JSON.parse(exampleBlock('event')) as { name: string; data: Record<string, unknown> };
    await createWorkflow(service.api(), definition);

    const started = await sendAndRead(event);
    expect(started.started).to.have.length(1);
    const execution = await waitForExecution(service.api(), started.started[0]!);
    expect(execution.status).to.equal('success');
    expect(execution.output).to.deep.equal(JSON.parse(exampleBlock('output')));

    const free = await sendAndRead({ name: event.name, data: { ...event.data, plan: 'free' } });
    expect(free.started).to.deep.equal([]);

    const { email: _email, ...withoutEmail } = event.data;
    const refused = await sendAndRead({ name: event.name, data: withoutEmail });
    expect(refused.started).to.deep.equal([]);
    expect(refused.errors).to.deep.equal(errorsBlock());
  });

  it("waits for an order's payment as the page shows, and fails with event_timed_out without one", async () => {
    const example = markedBlock(PAGE, 'wait example');
    const { key } = await service.newWorkspace(['write']);
    const result = await runWithTutorialHelpers(example, { url: service.url, key });
    expect(result.code, result.output).to.equal(0);
    const answers = shownAnswers(example);
    expect(answers, 'the answers the example shows').to.have.length(6);
    for (const answer of answers) expect(result.output, result.output).to.match(answer);

    // The same definition without a payment in time: the error the page shows, for a timeout of 2s.
    const created = /-d '(\{\s*"id": "order-payment"[\s\S]*?\})'/.exec(example);
    expect(created, 'the definition in the example').to.not.equal(null);
    const definition = JSON.parse(created![1]!) as { id: string; steps: { timeout?: string }[] };
    const api = service.api(key);
    const id = await createWorkflow(api, {
      ...definition,
      id: 'order-payment-late',
      steps: [{ ...definition.steps[0]!, timeout: '2s' }, ...definition.steps.slice(1)],
    });
    const late = await waitForExecution(api, await trigger(api, id, { order_id: 'ord_1043' }));
    expect(late.status).to.equal('failed');
    expect(late.error).to.deep.equal(JSON.parse(timedOutBlock().replace('within 24h', 'within 2s')));
  });
});
