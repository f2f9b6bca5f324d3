/**
 * An independent fuzzer against the served OpenAPI document: Schemathesis (from PyPI, pinned; see
 * test/support/schemathesis.ts) runs every operation of GET /v1/openapi.json against a real service (API
 * + worker, the Temporal dev server, PGlite) with all of its checks and all of its phases (the document's
 * examples, coverage of every schema keyword, property-based fuzzing, and stateful sequences that follow
 * the document's links), and must report no failure and no error.
 *
 * What it is told besides the document (test/support/schemathesis/): an admin key; the ids of fixtures
 * that no link leads to (a waiting approval, a failed execution, a webhook delivery, a webhook-triggered
 * workflow whose inbound hooks it signs); not to revoke the key it runs with. The 400s the API answers
 * for rules no JSON Schema can state, the only rejections of schema-valid requests it accepts, it reads
 * from the document itself: each operation lists its own (`x-semantic-errors`, src/api/semantic-errors.ts).
 *
 * Reproducible: a fixed seed, no example database or cache carried between runs, one worker.
 * `FUZZ_SEED=<n>` runs another seed, `FUZZ_MAX_EXAMPLES=<n>` fuzzes longer, `FUZZ_OUTPUT=<file>` keeps
 * Schemathesis's whole report, `FUZZ_EXTRA_ARGS` adds arguments (`--report har --report-dir <dir>`).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { projectRoot } from '../../platform/paths';
import { createWorkflow, definition, rulesStep, trigger, waitForExecution } from '../support/fixtures';
import { allowLoopbackOnly } from '../support/loopback-only';
import { Receiver } from '../support/receiver';
import { ensureSchemathesis, type SchemathesisCommand } from '../support/schemathesis';
import { startTestService, tempDir, type TestService } from '../support/stack';
import { waitFor } from '../support/wait';

/** CI runs this one; FUZZ_SEED=<n> explores another. */
const SEED = Number(process.env['FUZZ_SEED'] ?? 20_261_124);
/**
 * Test cases per operation in the fuzzing phase (a short budget: the coverage phase, which tries every
 * keyword of every schema, takes most of the run, 1-2 min on two loaded cores). FUZZ_MAX_EXAMPLES=<n>
 * runs longer.
 */
const MAX_EXAMPLES = Number(process.env['FUZZ_MAX_EXAMPLES'] ?? 10);
const SUPPORT_DIR = path.join(projectRoot, 'test/support/schemathesis');

interface RunResult {
  code: number | null;
  output: string;
}

describe('OpenAPI fuzzing with Schemathesis @integration', function () {
  let schemathesis: SchemathesisCommand;
  let service: TestService;
  let receiver: Receiver;
  let restoreNetwork: (() => void) | undefined;
  const refusedHosts = new Set<string>();
  let key = '';
  const fixtures: Record<string, string> = {};

  before(async function () {
    this.timeout(15 * 60_000);
    schemathesis = await ensureSchemathesis((line) => process.stderr.write(`${line}\n`));
    // Schemathesis chooses webhook URLs and connector destinations: none may leave the machine.
    restoreNetwork = allowLoopbackOnly((host) => refusedHosts.add(host));
    receiver = await Receiver.start();
    service = await startTestService({
      env: {
        WEBHOOK_RETRY_SCHEDULE: '1',
        // The fuzzer creates hundreds of endpoints and keys: past the workspace's limits every create would
        // be a 409 limit_exceeded, and the rest of each operation would go untried.
        WORKSPACE_MAX_WEBHOOK_ENDPOINTS: 'unlimited',
        WORKSPACE_MAX_API_KEYS: 'unlimited',
        WORKSPACE_MAX_SECRETS: 'unlimited',
        WORKSPACE_MAX_WORKFLOWS: 'unlimited',
      },
    });
    const created = await service
      .api()
      .post('/v1/api-keys', { name: 'schemathesis', scopes: ['read', 'write', 'admin'] });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    key = created.body.key;
    fixtures['SY_FUZZ_KEY_ID'] = created.body.id;
    await createFixtures();
  });

  after(async function () {
    // Stopping drains the worker of the runs the fuzzer started: slow on two loaded cores.
    this.timeout(180_000);
    await service?.stop();
    await receiver?.stop();
    restoreNetwork?.();
  });

  async function createFixtures(): Promise<void> {
    const api = service.api(key);
    const approval = await createWorkflow(api, definition([{ id: 'review', kind: 'approval' }]));
    const failing = await createWorkflow(
      api,
      definition([rulesStep('route', [{ when: 'true', action: 'fail', message: 'no' }])]),
    );
    const webhook = await api.post('/v1/webhooks', {
      url: `${receiver.url}/events`,
      events: ['execution.failed'],
    });
    expect(webhook.status, JSON.stringify(webhook.body)).to.equal(201);
    // In a workspace of its own: the key under test can neither delete it nor change its trigger, and
    // an inbound hook needs no key (the signature names the workflow).
    const other = service.api((await service.newWorkspace(['admin'])).key);
    const hooked = await other.post(
      '/v1/workflows',
      definition([rulesStep('route', [{ when: 'true' }])], { trigger: { type: 'webhook' } }),
    );
    expect(hooked.status, JSON.stringify(hooked.body)).to.equal(201);
    const approve = await trigger(api, approval);
    const reject = await trigger(api, approval);
    const failed = await trigger(api, failing);
    await waitForExecution(api, failed);
    const mapping = await createWorkflow(
      api,
      definition([
        { id: 'each', kind: 'map', items: 'input.list', steps: [rulesStep('per_item', [{ when: 'true' }])] },
      ]),
    );
    const mapped = await trigger(api, mapping, { list: [1, 2, 3] });
    await waitForExecution(api, mapped);
    await waitForExecution(api, approve, (e) => e.status === 'waiting');
    await waitForExecution(api, reject, (e) => e.status === 'waiting');
    const delivery = await waitFor(
      async () => {
        const res = await api.get(`/v1/webhooks/${webhook.body.id}/deliveries`);
        return (res.body.data as { id: string }[] | undefined)?.[0]?.id;
      },
      { what: 'a webhook delivery' },
    );
    Object.assign(fixtures, {
      SY_FUZZ_APPROVE_EXECUTION: approve,
      SY_FUZZ_REJECT_EXECUTION: reject,
      SY_FUZZ_FAILED_EXECUTION: failed,
      SY_FUZZ_MAP_EXECUTION: mapped,
      SY_FUZZ_WEBHOOK: webhook.body.id,
      SY_FUZZ_DELIVERY: delivery,
      SY_FUZZ_HOOK_WORKFLOW: hooked.body.id,
      SY_FUZZ_HOOK_SECRET: hooked.body.hook_secret,
    });
  }

  function runSchemathesis(timeoutMs: number): Promise<RunResult> {
    // A fresh working directory: Schemathesis keeps an example database and a cache in its working
    // directory, and replaying an earlier run's findings would make this run depend on the last one.
    const cwd = tempDir('sy-schemathesis-');
    // The project's configuration and the fixtures' ids (fixtures.toml reads them from the environment).
    const config = path.join(cwd, 'schemathesis.toml');
    fs.writeFileSync(
      config,
      `${fs.readFileSync(path.join(SUPPORT_DIR, 'schemathesis.toml'), 'utf8')}\n` +
        fs.readFileSync(path.join(SUPPORT_DIR, 'fixtures.toml'), 'utf8'),
    );
    const args = [
      ...schemathesis.args,
      '--config-file',
      config,
      'run',
      `${service.url}/v1/openapi.json`,
      '--checks',
      'all',
      '--phases',
      'examples,coverage,fuzzing,stateful',
      '--max-examples',
      String(MAX_EXAMPLES),
      '--seed',
      String(SEED),
      '--generation-database',
      'none',
      // One worker: reproducible, and Python 3.11's parser is not safe to use from several threads at
      // once (Hypothesis parses lambdas while it builds strategies).
      '--workers',
      '1',
      '--header',
      `Authorization: Bearer ${key}`,
      '--request-timeout',
      '30',
      '--no-color',
      ...(process.env['FUZZ_EXTRA_ARGS']?.split(' ').filter(Boolean) ?? []),
    ];
    return new Promise((resolve, reject) => {
      const child = spawn(schemathesis.command, args, {
        cwd,
        env: {
          ...process.env,
          ...schemathesis.env,
          ...fixtures,
          SCHEMATHESIS_HOOKS: path.join(SUPPORT_DIR, 'hooks.py'),
          PYTHONDONTWRITEBYTECODE: '1',
          COLUMNS: '120',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        fs.rmSync(cwd, { recursive: true, force: true });
        resolve({ code, output });
      });
    });
  }

  it('reports 0 failures with all checks against every operation', async function () {
    this.timeout(10 * 60_000);
    const result = await runSchemathesis(9 * 60_000);
    // FUZZ_OUTPUT=<file> keeps Schemathesis's whole report (and the destinations the guard refused).
    if (process.env['FUZZ_OUTPUT'])
      fs.writeFileSync(
        process.env['FUZZ_OUTPUT'],
        `${result.output}\nRefused destinations: ${[...refusedHosts].join(' ') || 'none'}\n`,
      );
    expect(result.code, failureReport(result.output)).to.equal(0);
    expect(result.output, 'every operation tested').to.match(/Tested: (\d+)\b/);
    const [, selected, total] = /Selected: (\d+)\/(\d+)/.exec(result.output) ?? [];
    expect(selected, 'operations selected').to.equal(total);
    // The key under test was never revoked (the hooks drop that one call).
    expect((await service.api(key).get('/v1/api-keys')).status).to.equal(200);
  });
});

/** Schemathesis's own report of what failed (errors, failures, summary), short enough for a test log. */
function failureReport(output: string): string {
  const start = output.search(/^=+ (ERRORS|FAILURES) =+$/m);
  const report = start >= 0 ? output.slice(start) : output.slice(-6000);
  const cut = 20_000;
  return `Schemathesis failed:\n${report.length > cut ? `${report.slice(0, cut)}\n… (${report.length - cut} more characters)` : report}\n`;
}
