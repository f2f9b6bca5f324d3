/**
 * The worked example of docs/definitions.md#a-worked-example runs as printed: the definition saves, the
 * trigger's input starts it, and GET /v1/executions/{id} answers what the page shows.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { projectRoot } from '../../platform/paths';
import { createWorkflow, trigger, uniqueId, waitForExecution } from '../support/fixtures';
import { fencedBlocks } from '../support/markdown';
import { startTestService, type TestService } from '../support/stack';

const PAGE = 'docs/definitions.md';

/** The code of the page's block marked `<!-- composition example: <part> ... -->`. */
function exampleBlock(part: string): string {
  const blocks = fencedBlocks(fs.readFileSync(path.join(projectRoot, PAGE), 'utf8')).filter((block) =>
    block.marker?.startsWith(`composition example: ${part}`),
  );
  expect(blocks, `blocks marked "composition example: ${part}" in ${PAGE}`).to.have.length(1);
  return blocks[0]!.code;
}

/** The JSON the page's trigger command sends (its `-d '...'`). */
function triggerInput(): unknown {
  const data = /-d '([^']*)'\s*\|/.exec(exampleBlock('run').replace(/\\\n\s*/g, ' '));
  expect(data, `the trigger command's -d '...' in ${PAGE}`).to.not.equal(null);
  return JSON.parse(data![1]!);
}

describe('the composition example of the docs @integration', function () {
  let service: TestService;
  before(async function () {
    this.timeout(120_000);
    service = await startTestService();
  });
  after(() => service?.stop());

  it('saves, runs, and ends with the status and output the page shows', async () => {
    const definition = JSON.parse(exampleBlock('definition')) as Record<string, unknown>;
    const expected = JSON.parse(exampleBlock('response')) as Record<string, unknown>;
    const workflowId = await createWorkflow(service.api(), { ...definition, id: uniqueId('order-invoice') });
    const execution = await waitForExecution(
      service.api(),
      await trigger(service.api(), workflowId, triggerInput()),
    );
    expect(execution, JSON.stringify(execution.error)).to.deep.include(expected);
  });
});
