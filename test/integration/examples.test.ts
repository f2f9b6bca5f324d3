/**
 * examples/ (examples/README.md): every file saves through the API as it is, and each sample run ends with
 * the status and output the README shows, its services answered by a local stand-in with the README's
 * answers.
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { examples, pointedAt, sampleOf, standIn, EXAMPLES_DIR } from '../support/examples';
import { createWorkflow, trigger, waitForExecution } from '../support/fixtures';
import { Receiver } from '../support/receiver';
import { startTestService, type TestService } from '../support/stack';

const CLI = resolve(__dirname, '../../../clients/typescript/dist/cli/main.js');

describe('the examples @integration', function () {
  let service: TestService;
  before(async function () {
    this.timeout(120_000);
    service = await startTestService();
    for (const { definition } of examples()) await createWorkflow(service.api(), definition);
  });
  after(() => service?.stop());

  /** The example's sample run against a stand-in giving `answers` (the README's by default). */
  async function runSample(name: string, answers = sampleOf(name)!.answers) {
    const receiver = await Receiver.start();
    try {
      const stand = standIn(answers);
      receiver.replyAlways(stand.respond);
      const input = pointedAt(sampleOf(name)!.input, receiver.url);
      const execution = await waitForExecution(
        service.api(),
        await trigger(service.api(), name, input),
        undefined,
        60_000,
      );
      return { execution, asked: stand.asked, requests: receiver.requests };
    } finally {
      await receiver.stop();
    }
  }

  for (const { name } of examples()) {
    it(`${name}: the sample run ends with the status and output the README shows`, async () => {
      const sample = sampleOf(name);
      expect(sample, `examples/README.md has no sample input, answers and result for ${name}`).to.not.equal(
        undefined,
      );
      const { execution, asked, requests } = await runSample(name);
      expect(
        { status: execution.status, output: execution.output },
        `${JSON.stringify(execution.error)}; requests: ${requests.map((r) => `${r.method} ${r.path}`).join(', ')}`,
      ).to.deep.equal(sample!.result);
      // Every answer the README shows was asked for, each of a list in turn.
      for (const [key, answer] of Object.entries(sample!.answers)) {
        expect(asked.get(key) ?? 0, `requests answered by "${key}"`).to.be.at.least(
          Array.isArray(answer) ? answer.length : 1,
        );
      }
    });
  }

  it('fan-out-enrichment: with billing down, the run succeeds without a plan (check_billing)', async () => {
    const answers = { ...sampleOf('fan-out-enrichment')!.answers };
    answers['GET https://billing.example.com/v1/accounts/cus_1042'] = { status: 503, body: 'down' };
    const { execution } = await runSample('fan-out-enrichment', answers);
    expect(execution.status, JSON.stringify(execution.error)).to.equal('success');
    expect(execution.output).to.deep.include({
      plan: null,
      next_action: { action: 'check_billing', reason: 'billing did not answer' },
    });
  });

  it('the CLI command of examples/README.md loads every example into a workspace', async () => {
    const { key } = await service.newWorkspace(['write']);
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [CLI, 'workflows', 'apply', '-f', EXAMPLES_DIR, '--json'],
      { env: { PATH: process.env['PATH'], SWITCHYARD_URL: service.url, SWITCHYARD_API_KEY: key } },
    );
    const outcomes = JSON.parse(stdout) as { id: string; result: string }[];
    expect(outcomes.map(({ id, result }) => [id, result])).to.have.deep.members(
      examples().map(({ name }) => [name, 'created']),
    );
  });
});
