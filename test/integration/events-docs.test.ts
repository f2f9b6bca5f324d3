/**
 * The worked example of docs/events.md#a-worked-example-onboarding-new-users runs as printed: the definition
 * saves, the event starts one run with the output the page shows, a free signup starts nothing, and data
 * without an email is refused with the error the page shows.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { projectRoot } from '../../platform/paths';
import { createWorkflow, waitForExecution } from '../support/fixtures';
import { fencedBlocks } from '../support/markdown';
import { startTestService, type TestService } from '../support/stack';
import { waitFor } from '../support/wait';

const PAGE = 'docs/events.md';

/** The code of the page's block marked `<!-- events example: <part> ... -->`. */
function exampleBlock(part: string): string {
  const blocks = fencedBlocks(fs.readFileSync(path.join(projectRoot, PAGE), 'utf8')).filter((block) =>
    block.marker?.startsWith(`events example: ${part}`),
  );
  expect(blocks, `blocks marked "events example: ${part}" in ${PAGE}`).to.have.length(1);
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
});
