/**
 * The `switchyard` CLI (clients/typescript/src/cli) as a user runs it: the built CLI in a child process
 * against the real service, configured through the environment (or the file `login` writes).
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect } from 'chai';
import { SwitchyardClient, type Execution, type WorkflowDefinition } from '@switchyard/client';
import { uniqueId } from '../support/fixtures';
import { Receiver } from '../support/receiver';
import { startTestService, type TestService } from '../support/stack';
import { waitFor } from '../support/wait';

const CLI = resolve(__dirname, '../../../clients/typescript/dist/cli/main.js');

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI (asynchronously: the service answers from this process). */
function cli(args: string[], env: Record<string, string | undefined>): Promise<CliResult> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { env: { PATH: process.env['PATH'], ...env }, timeout: 90_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        done({ code, stdout, stderr });
      },
    );
  });
}

function rulesWorkflow(id: string, tier = 'high'): WorkflowDefinition {
  return {
    id,
    name: 'CLI test',
    input_schema: { type: 'object', required: ['plan'], properties: { plan: { type: 'string' } } },
    steps: [
      {
        id: 'route',
        kind: 'rules',
        rules: [
          { when: "input.plan = 'pro'", output: { tier } },
          { when: "input.plan = 'banned'", action: 'fail', message: 'plan not allowed' },
        ],
        default: { tier: 'standard' },
      },
    ],
  };
}

describe('CLI switchyard @integration', function () {
  this.timeout(180_000);
  let service: TestService;
  let env: Record<string, string>;
  let client: SwitchyardClient;
  let configHome: string;

  before(async () => {
    service = await startTestService();
    const { key } = await service.newWorkspace(['admin']);
    configHome = mkdtempSync(join(tmpdir(), 'sy-cli-config-'));
    env = { SWITCHYARD_URL: service.url, SWITCHYARD_API_KEY: key, XDG_CONFIG_HOME: configHome };
    client = new SwitchyardClient({ baseUrl: service.url, apiKey: key });
  });
  after(async () => {
    await service?.stop();
  });

  it('applies a directory twice: created, then unchanged; a changed file is updated after its diff', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sy-cli-defs-'));
    const jsonId = uniqueId('cli');
    const yamlId = uniqueId('cli');
    writeFileSync(join(dir, 'a.json'), JSON.stringify(rulesWorkflow(jsonId), null, 2));
    mkdirSync(join(dir, 'more'));
    writeFileSync(
      join(dir, 'more', 'b.yaml'),
      [
        `id: ${yamlId}`,
        'name: From YAML',
        'steps:',
        '  - id: route',
        '    kind: rules',
        '    rules: []',
        '    default: { tier: standard }',
        '',
      ].join('\n'),
    );
    writeFileSync(join(dir, 'notes.txt'), 'not a definition');

    const first = await cli(['workflows', 'apply', '-f', dir], env);
    expect(first.code, first.stderr).to.equal(0);
    expect(first.stdout).to.match(new RegExp(`a\\.json: ${jsonId} created \\(version 1\\)`));
    expect(first.stdout).to.match(new RegExp(`b\\.yaml: ${yamlId} created \\(version 1\\)`));

    const second = await cli(['workflows', 'apply', '-f', dir], env);
    expect(second.code, second.stderr).to.equal(0);
    expect(second.stdout).to.match(new RegExp(`${jsonId} unchanged \\(version 1\\)`));
    expect(second.stdout).to.match(new RegExp(`${yamlId} unchanged \\(version 1\\)`));
    expect((await client.workflows.get(jsonId)).latest_version).to.equal(1);

    writeFileSync(join(dir, 'a.json'), JSON.stringify(rulesWorkflow(jsonId, 'gold'), null, 2));
    const third = await cli(['workflows', 'apply', '-f', dir], env);
    expect(third.code, third.stderr).to.equal(0);
    expect(third.stdout).to.include(`--- ${jsonId} (version 1)`);
    expect(third.stdout).to.include(`+++ ${jsonId} (file)`);
    expect(third.stdout).to.match(/^-\s+"tier": "high"$/m);
    expect(third.stdout).to.match(/^\+\s+"tier": "gold"$/m);
    expect(third.stdout).to.match(new RegExp(`a\\.json: ${jsonId} updated \\(version 2\\)`));
    expect(third.stdout).to.match(new RegExp(`${yamlId} unchanged`));
    expect((await client.workflows.get(jsonId)).latest_version).to.equal(2);

    const asJson = await cli(['workflows', 'apply', '-f', dir, '--json'], env);
    expect(asJson.code, asJson.stderr).to.equal(0);
    const outcomes = JSON.parse(asJson.stdout) as { id: string; result: string; version: number }[];
    expect(outcomes.map((o) => [o.id, o.result, o.version])).to.deep.equal([
      [jsonId, 'unchanged', 2],
      [yamlId, 'unchanged', 1],
    ]);
  });

  it('runs a workflow with --wait and prints its steps as a table; a failed run exits 1', async () => {
    const id = uniqueId('cli');
    await client.workflows.create(rulesWorkflow(id));

    const ok = await cli(['run', id, '--input', '{"plan":"pro"}', '--wait'], env);
    expect(ok.code, ok.stderr).to.equal(0);
    expect(ok.stdout).to.match(/Execution ex_\S+ .*: success in/);
    expect(ok.stdout).to.match(/^STEP\s+KIND\s+STATUS\s+DURATION$/m);
    expect(ok.stdout).to.match(/^trigger\s+trigger\s+success\s/m);
    expect(ok.stdout).to.match(/^route\s+rules\s+success\s+\d/m);

    const failed = await cli(['run', id, '--input', '{"plan":"banned"}', '--wait'], env);
    expect(failed.code).to.equal(1);
    expect(failed.stdout).to.match(/^route\s+rules\s+failed\s/m);
    expect(failed.stdout).to.include('plan not allowed');
  });

  it('--json output parses: workflows list, run --wait, executions list and get', async () => {
    const id = uniqueId('cli');
    await client.workflows.create(rulesWorkflow(id));

    const list = await cli(['workflows', 'list', '--json'], env);
    expect(list.code, list.stderr).to.equal(0);
    expect((JSON.parse(list.stdout) as { id: string }[]).map((w) => w.id)).to.include(id);

    const run = await cli(['run', id, '--input', '{"plan":"pro"}', '--wait', '--json'], env);
    expect(run.code, run.stderr).to.equal(0);
    const execution = JSON.parse(run.stdout) as Execution;
    expect(execution.status).to.equal('success');
    expect(execution.steps.map((s) => s.id)).to.deep.equal(['trigger', 'route']);

    const get = await cli(['executions', 'get', execution.execution_id, '--json'], env);
    expect((JSON.parse(get.stdout) as Execution).execution_id).to.equal(execution.execution_id);

    const started = await cli(['run', id, '--input', '{"plan":"pro"}', '--json'], env);
    expect(JSON.parse(started.stdout)).to.include({ status: 'accepted' });

    const executions = await cli(['executions', 'list', '--workflow', id, '--json'], env);
    expect(executions.code, executions.stderr).to.equal(0);
    expect(JSON.parse(executions.stdout)).to.be.an('array');
  });

  it('executions list keeps failed runs of one error code, and runs started in a window', async () => {
    const id = uniqueId('cli');
    await client.workflows.create(rulesWorkflow(id));
    const ok = await cli(['run', id, '--input', '{"plan":"pro"}', '--wait', '--json'], env);
    const bad = await cli(['run', id, '--input', '{"plan":"banned"}', '--wait', '--json'], env);
    const failedId = (JSON.parse(bad.stdout) as Execution).execution_id;
    const listed = async (...options: string[]) => {
      const res = await cli(['executions', 'list', '--workflow', id, ...options, '--json'], env);
      expect(res.code, res.stderr).to.equal(0);
      return (JSON.parse(res.stdout) as { execution_id: string }[]).map((e) => e.execution_id);
    };
    const byCode = await waitFor(
      async () => {
        const ids = await listed('--error-code', 'rule_failed');
        return ids.length > 0 ? ids : undefined;
      },
      { what: 'the failed run listed by its error code' },
    );
    expect(byCode).to.deep.equal([failedId]);
    const okStarted = (JSON.parse(ok.stdout) as Execution).started_at;
    expect(await listed('--started-before', okStarted)).to.deep.equal([]);
    expect(await listed('--started-after', new Date(Date.now() + 60_000).toISOString())).to.deep.equal([]);
  });

  it('runs retry: a dry run counts the failed runs, then the bulk retry follows them to the end', async () => {
    const id = uniqueId('cli');
    await client.workflows.create(rulesWorkflow(id));
    const bad = await cli(['run', id, '--input', '{"plan":"banned"}', '--wait', '--json'], env);
    const failedId = (JSON.parse(bad.stdout) as Execution).execution_id;
    await waitFor(
      async () => (await client.executions.list({ workflow: id, status: 'failed' }).toArray(10)).length === 1,
      { what: 'the failed run listed' },
    );
    const dry = await cli(
      ['runs', 'retry', '--workflow', id, '--status', 'failed', '--dry-run', '--json'],
      env,
    );
    expect(dry.code, dry.stderr).to.equal(0);
    expect(JSON.parse(dry.stdout)).to.deep.equal({ matched: 1, sample: [failedId] });

    const retry = await cli(
      ['runs', 'retry', '--workflow', id, '--error-code', 'rule_failed', '--input', '{"plan":"pro"}'],
      env,
    );
    expect(retry.code, retry.stderr).to.equal(0);
    expect(retry.stdout).to.match(
      /^Bulk retry op_\S+: completed; 1 matched, 1 succeeded, 0 failed, 0 skipped/,
    );
    const done = await client.waitForExecution(failedId, { until: ['success'], timeoutMs: 60_000 });
    expect(done.status).to.equal('success');

    const usage = await cli(['runs', 'cancel'], env);
    expect(usage.code).to.equal(2);
    expect(usage.stderr).to.include('needs execution ids or a filter');
  });

  it("lists a map step's runs, or those of one status, as a table or as JSON", async () => {
    const id = uniqueId('cli');
    await client.workflows.create({
      id,
      name: 'CLI runs',
      steps: [
        {
          id: 'each',
          kind: 'map',
          items: 'input.list',
          tolerated_failures: 1,
          steps: [
            { id: 'check', kind: 'rules', rules: [{ when: 'item = 2', action: 'fail', message: 'two' }] },
          ],
        },
      ],
    });
    const { execution_id } = await client.workflows.trigger(id, { list: [1, 2, 3] });
    await client.executions.wait(execution_id);

    const table = await cli(['executions', 'runs', execution_id, 'each'], env);
    expect(table.code, table.stderr).to.equal(0);
    expect(table.stdout).to.match(/^RUN\s+STATUS\s+STARTED\s+FINISHED\s+ERROR$/m);
    expect(table.stdout).to.match(/^1\s+failed\s.*check: rule_failed: two$/m);

    const failed = await cli(
      ['executions', 'runs', execution_id, 'each', '--status', 'failed', '--json'],
      env,
    );
    expect(failed.code, failed.stderr).to.equal(0);
    expect((JSON.parse(failed.stdout) as { key: string }[]).map((run) => run.key)).to.deep.equal(['1']);
  });

  it('runs show prints a run as a tree: containers, their first 20 runs, nested steps indented', async () => {
    const id = uniqueId('cli');
    const child = uniqueId('cli');
    await client.workflows.create({
      id: child,
      steps: [{ id: 'one', kind: 'rules', rules: [], default: 1 }],
    });
    await client.workflows.create({
      id,
      name: 'CLI tree',
      steps: [
        {
          id: 'each',
          kind: 'map',
          items: 'input.list',
          steps: [
            {
              id: 'both',
              kind: 'parallel',
              branches: [
                { id: 'left', steps: [{ id: 'echo', kind: 'rules', rules: [], default: '{{ item }}' }] },
                {
                  id: 'right',
                  steps: [
                    {
                      id: 'count',
                      kind: 'loop',
                      max_iterations: 5,
                      until: 'steps.tick.output >= 2',
                      steps: [{ id: 'tick', kind: 'rules', rules: [], default: '{{ iteration + 1 }}' }],
                    },
                  ],
                },
              ],
            },
          ],
        },
        { id: 'done', kind: 'rules', rules: [], default: '{{ $count(steps.each.output) }}' },
        { id: 'call', kind: 'workflow', workflow: child },
      ],
    });
    const { execution_id } = await client.workflows.trigger(id, {
      list: Array.from({ length: 25 }, (_, i) => i),
    });
    const execution = await client.waitForExecution(execution_id, { timeoutMs: 60_000 });
    expect(execution.status, JSON.stringify(execution.error)).to.equal('success');

    const shown = await cli(['runs', 'show', execution_id], env);
    expect(shown.code, shown.stderr).to.equal(0);
    const lines = shown.stdout.split('\n');
    expect(lines[0]).to.match(new RegExp(`^Execution ${execution_id} \\(${id} v1\\): success in `));
    // Item 0's lines, each level two spaces further in than the container it is in (durations left out).
    const item0 = lines.slice(lines.findIndex((line) => line.startsWith('  [0] ')));
    const withoutDuration = (line = '') => line.replace(/\s+(-|[\d.]+ m?s|\d+ min \d+ s)$/, '');
    [
      ['  [0]', 'item'],
      ['    both', 'parallel'],
      ['      [left]', 'branch'],
      ['        echo', 'rules'],
      ['      [right]', 'branch'],
      ['        count', 'loop'],
      ['          [0]', 'iteration'],
      ['            tick', 'rules'],
      ['          [1]', 'iteration'],
      ['            tick', 'rules'],
    ].forEach(([label, kind], i) => {
      const pattern = new RegExp(`^${label!.replace(/[[\]]/g, '\\$&')}\\s+${kind}\\s+success$`);
      expect(withoutDuration(item0[i]), `line ${i} of item 0 in:\n${shown.stdout}`).to.match(pattern);
    });
    expect(shown.stdout).to.match(/^each\s+map\s+success\s+\d/m);
    expect(shown.stdout).to.match(/^ {2}\[19\]\s+item\s+success/m);
    expect(shown.stdout).to.not.match(/^ {2}\[20\]/m);
    expect(lines).to.include(`  … 5 more runs: switchyard executions runs ${execution_id} each`);
    expect(shown.stdout).to.match(/^done\s+rules\s+success\s+\d/m);
    // A workflow step: its child execution on the line below it.
    const call = lines.findIndex((line) => /^call\s+workflow\s+success\s/.test(line));
    expect(lines[call + 1], shown.stdout).to.match(/^ {2}child execution ex_\w+ \(success\)$/);

    const asJson = await cli(['runs', 'show', execution_id, '--json'], env);
    expect(asJson.code, asJson.stderr).to.equal(0);
    expect(JSON.parse(asJson.stdout)).to.deep.equal(await client.executions.get(execution_id));
  });

  it('approves a waiting step from the command line', async () => {
    const id = uniqueId('cli');
    await client.workflows.create({ id, steps: [{ id: 'review', kind: 'approval' }] });
    const started = await cli(['run', id, '--json'], env);
    expect(started.code, started.stderr).to.equal(0);
    const { execution_id } = JSON.parse(started.stdout) as { execution_id: string };
    await client.waitForExecution(execution_id, { until: ['waiting'], timeoutMs: 60_000 });

    const approved = await cli(['executions', 'approve', execution_id, 'review', '--comment', 'ok'], env);
    expect(approved.code, approved.stderr).to.equal(0);
    expect(approved.stdout).to.include('approved');
    const done = await client.waitForExecution(execution_id, { timeoutMs: 60_000 });
    expect(done.status).to.equal('success');
    expect(done.steps.find((s) => s.id === 'review')?.output).to.include({ comment: 'ok' });
  });

  it('shows until when a sleeping step sleeps', async () => {
    const id = uniqueId('cli');
    await client.workflows.create({ id, steps: [{ id: 'nap', kind: 'sleep', duration: '1h' }] });
    const { execution_id } = await client.workflows.trigger(id, {});
    const waiting = await client.waitForExecution(execution_id, { until: ['waiting'], timeoutMs: 60_000 });
    const until = waiting.steps.find((s) => s.id === 'nap')!.waiting_for!.until;

    const shown = await cli(['executions', 'get', execution_id], env);
    expect(shown.code, shown.stderr).to.equal(0);
    expect(shown.stdout).to.match(new RegExp(`nap\\s+sleep\\s+waiting until ${until.replace(/\./g, '\\.')}`));
    await client.executions.cancel(execution_id);
  });

  it('shows which event a waiting wait_for_event step waits for, and until when', async () => {
    const id = uniqueId('cli');
    const event = `payment.succeeded.${id}`;
    await client.workflows.create({
      id,
      steps: [
        {
          id: 'pay',
          kind: 'map',
          items: 'input.orders',
          as: 'order',
          steps: [{ id: 'payment', kind: 'wait_for_event', event, timeout: '2h' }],
        },
      ],
    });
    const { execution_id } = await client.workflows.trigger(id, { orders: ['o-1'] });
    const waiting = await client.waitForExecution(execution_id, { until: ['waiting'], timeoutMs: 60_000 });
    const until = waiting.steps.find((s) => s.id === 'pay')!.runs![0]!.steps[0]!.waiting_for!.until;

    const shown = await cli(['runs', 'show', execution_id], env);
    expect(shown.code, shown.stderr).to.equal(0);
    expect(shown.stdout).to.match(
      new RegExp(
        `\\n {4}payment\\s+wait_for_event\\s+waiting for event ${event.replace(/\./g, '\\.')} until ${until.replace(/\./g, '\\.')}\\s`,
      ),
    );
    await client.executions.cancel(execution_id);
  });

  it('retries a failed run from its failed step with a corrected --input', async () => {
    const id = uniqueId('cli');
    await client.workflows.create(rulesWorkflow(id));
    const failed = await cli(['run', id, '--input', '{"plan":"banned"}', '--wait', '--json'], env);
    expect(failed.code).to.equal(1);
    const { execution_id } = JSON.parse(failed.stdout) as Execution;

    const retried = await cli(['executions', 'retry', execution_id, '--input', '{"plan":"pro"}'], env);
    expect(retried.code, retried.stderr).to.equal(0);
    expect(retried.stdout.trim()).to.equal(`Retrying ${execution_id} from step route`);
    const done = await client.waitForExecution(execution_id, { timeoutMs: 60_000 });
    expect(done.status).to.equal('success');
    expect(done.steps.find((s) => s.id === 'route')?.output).to.deep.equal({ tier: 'high' });

    const again = await cli(['executions', 'retry', execution_id], env);
    expect(again.code).to.equal(3);
    expect(again.stderr).to.include('execution_not_failed');
  });

  it('cancels a waiting run; a second cancel exits 3 with execution_not_running', async () => {
    const id = uniqueId('cli');
    await client.workflows.create({ id, steps: [{ id: 'review', kind: 'approval' }] });
    const { execution_id } = await client.workflows.trigger(id, {});
    await client.waitForExecution(execution_id, { until: ['waiting'], timeoutMs: 60_000 });

    const canceled = await cli(['executions', 'cancel', execution_id], env);
    expect(canceled.code, canceled.stderr).to.equal(0);
    expect(canceled.stdout.trim()).to.equal(`Cancel requested for ${execution_id}`);
    const done = await client.waitForExecution(execution_id, { timeoutMs: 60_000 });
    expect(done.status).to.equal('canceled');

    const again = await cli(['executions', 'cancel', execution_id], env);
    expect(again.code).to.equal(3);
    expect(again.stderr).to.include('execution_not_running');
  });

  it('rejects a waiting step with a comment: the run fails with approval_rejected', async () => {
    const id = uniqueId('cli');
    await client.workflows.create({ id, steps: [{ id: 'review', kind: 'approval' }] });
    const { execution_id } = await client.workflows.trigger(id, {});
    await client.waitForExecution(execution_id, { until: ['waiting'], timeoutMs: 60_000 });

    const rejected = await cli(['executions', 'reject', execution_id, 'review', '--comment', 'not now'], env);
    expect(rejected.code, rejected.stderr).to.equal(0);
    expect(rejected.stdout.trim()).to.equal(`Step review of ${execution_id}: rejected`);
    const done = await client.waitForExecution(execution_id, { timeoutMs: 60_000 });
    expect(done.status).to.equal('failed');
    expect(done.error).to.include({ step: 'review', code: 'approval_rejected' });
    expect(done.steps.find((s) => s.id === 'review')?.output).to.include({
      decision: 'rejected',
      comment: 'not now',
    });
  });

  it('lists webhook endpoints and their deliveries with each attempt', async () => {
    const receiver = await Receiver.start();
    try {
      const { key } = await service.newWorkspace(['admin']);
      const own = { ...env, SWITCHYARD_API_KEY: key };
      const api = new SwitchyardClient({ baseUrl: service.url, apiKey: key });
      const endpoint = await api.webhooks.create({
        url: `${receiver.url}/cli-hook`,
        events: ['execution.completed'],
        description: 'CLI test',
      });
      const empty = await cli(['webhooks', 'deliveries', endpoint.id], own);
      expect(empty.code, empty.stderr).to.equal(0);
      expect(empty.stdout.trim()).to.equal('No deliveries.');

      receiver.replyOnceTo('/cli-hook', { status: 500, body: { error: 'down' } });
      const workflow = await api.workflows.create(rulesWorkflow(uniqueId('cli')));
      const { execution_id } = await api.workflows.trigger(workflow.id, { plan: 'pro' });
      await waitFor(async () => receiver.requestsTo('/cli-hook').length >= 2 || undefined, {
        timeoutMs: 60_000,
        what: 'a failed attempt and its retry',
      });

      const list = await cli(['webhooks', 'list'], own);
      expect(list.code, list.stderr).to.equal(0);
      expect(list.stdout).to.match(/^ID\s+URL\s+STATUS\s+EVENTS\s+DESCRIPTION$/m);
      expect(list.stdout).to.match(
        new RegExp(`^${endpoint.id}\\s+\\S+/cli-hook\\s+enabled\\s+execution\\.completed\\s+CLI test$`, 'm'),
      );

      const deliveries = await waitFor(
        async () => {
          const result = await cli(['webhooks', 'deliveries', endpoint.id, '--json'], own);
          const items = JSON.parse(result.stdout) as { status: string; attempts: unknown[] }[];
          return items[0]?.status === 'succeeded' ? items : undefined;
        },
        { timeoutMs: 30_000, what: 'the delivery recorded as succeeded' },
      );
      expect(deliveries).to.have.length(1);
      expect(deliveries[0]).to.include({ event: 'execution.completed', execution_id });
      expect(deliveries[0]!.attempts.map((a) => (a as { status_code: number }).status_code)).to.deep.equal([
        500, 200,
      ]);

      const table = await cli(['webhooks', 'deliveries', endpoint.id], own);
      expect(table.code, table.stderr).to.equal(0);
      expect(table.stdout).to.match(/^ID\s+EVENT\s+EXECUTION\s+STATUS\s+ATTEMPTS\s+LAST\s+CREATED$/m);
      expect(table.stdout).to.match(
        new RegExp(`execution\\.completed\\s+${execution_id}\\s+succeeded\\s+2\\s+200\\s`),
      );
    } finally {
      await receiver.stop();
    }
  });

  it('sends an event, lists events by name and shows one with the execution it started', async () => {
    const name = `cli.event.${uniqueId('n')}`;
    const id = uniqueId('cli');
    await client.workflows.create({ ...rulesWorkflow(id), trigger: { type: 'event', event: name } });
    const sent = await cli(['events', 'send', name, '--data', '{"plan":"pro"}', '--id', 'cli-evt-1'], env);
    expect(sent.code, sent.stderr).to.equal(0);
    expect(sent.stdout).to.equal('Sent cli-evt-1\n');
    const event = await waitFor(async () => {
      const shown = await cli(['events', 'show', 'cli-evt-1', '--json'], env);
      const parsed = JSON.parse(shown.stdout) as { started: string[] };
      return parsed.started.length > 0 && parsed;
    });
    const shown = await cli(['events', 'show', 'cli-evt-1'], env);
    expect(shown.stdout).to.include(`Event cli-evt-1 (${name})`);
    expect(shown.stdout).to.include(`Started: ${event.started[0]!}`);
    const listed = await cli(['events', 'list', '--name', name], env);
    expect(listed.code, listed.stderr).to.equal(0);
    expect(listed.stdout).to.match(/ID\s+NAME\s+RECEIVED\s+STARTED/);
    expect(listed.stdout).to.include('cli-evt-1');
    const bad = await cli(['events', 'send', name, '--data', '[1]'], env);
    expect(bad.code).to.equal(2);
  });

  it("shows the workspace's limits beside its usage, and a workflow's versions newest first", async () => {
    const id = uniqueId('cli');
    await client.workflows.create(rulesWorkflow(id));
    await client.workflows.update(id, rulesWorkflow(id, 'top'));
    const shown = await cli(['workspace'], env);
    expect(shown.code, shown.stderr).to.equal(0);
    expect(shown.stdout).to.match(/^Workspace ws-\w+ \(ws-\w+\)$/m);
    expect(shown.stdout).to.match(/^LIMIT\s+USED\s+MAXIMUM$/m);
    expect(shown.stdout).to.match(/^api_keys\s+1\s+100$/m);
    expect(shown.stdout).to.match(/^ai_tokens_per_day\s+0 today\s+unlimited$/m);
    const asJson = JSON.parse((await cli(['workspace', '--json'], env)).stdout) as { limits: object };
    expect(asJson.limits).to.include({ workflows: 1000, ai_tokens_per_day: null });

    const versions = await cli(['workflows', 'versions', id, '--json'], env);
    expect(versions.code, versions.stderr).to.equal(0);
    expect((JSON.parse(versions.stdout) as { version: number }[]).map((v) => v.version)).to.deep.equal([
      2, 1,
    ]);
    const table = await cli(['workflows', 'versions', id, '--limit', '1'], env);
    expect(table.stdout).to.match(/^VERSION\s+SAVED\n2\s+\S+Z\n$/);
  });

  it("shows, pauses, resumes, runs and backfills a workflow's schedule", async () => {
    const id = uniqueId('cli');
    await client.workflows.create({
      ...rulesWorkflow(id),
      trigger: { type: 'schedule', cron: '0 9 * * 1-5', timezone: 'Europe/Paris', input: { plan: 'pro' } },
    });
    try {
      const shown = await cli(['schedule', 'show', id], env);
      expect(shown.code, shown.stderr).to.equal(0);
      expect(shown.stdout).to.include(`Schedule of ${id}: cron "0 9 * * 1-5" (Europe/Paris), overlap skip`);
      expect(shown.stdout).to.include('Active');
      expect(shown.stdout).to.include('No recent runs.');

      const paused = await cli(['schedule', 'pause', id, '--note', 'audit week', '--json'], env);
      expect(paused.code, paused.stderr).to.equal(0);
      expect(JSON.parse(paused.stdout)).to.include({ paused: true, note: 'audit week' });
      const resumed = await cli(['schedule', 'resume', id], env);
      expect(resumed.code, resumed.stderr).to.equal(0);
      expect(resumed.stdout).to.include('Active');

      const run = await cli(['schedule', 'run', id, '--json'], env);
      expect(run.code, run.stderr).to.equal(0);
      const { execution_id } = JSON.parse(run.stdout) as { execution_id: string };
      expect((await client.waitForExecution(execution_id, { timeoutMs: 60_000 })).status).to.equal('success');

      // Monday 2026-11-16 to Saturday 2026-11-21 (Paris): five weekday mornings.
      const backfill = [
        'schedule',
        'backfill',
        id,
        '--start',
        '2026-11-16T00:00:00Z',
        '--end',
        '2026-11-21T00:00:00Z',
      ];
      const filled = await cli(backfill, env);
      expect(filled.code, filled.stderr).to.equal(0);
      expect(filled.stdout.trim()).to.equal(`Backfill of ${id}: 5 runs starting`);

      const usage = await cli(['schedule', 'backfill', id, '--start', '2026-11-16T00:00:00Z'], env);
      expect(usage.code).to.equal(2);
      expect(usage.stderr).to.include('--end');
    } finally {
      await client.workflows.delete(id);
    }
  });

  it('a usage error exits 2; an API error exits 3 with its code and request_id on stderr', async () => {
    for (const args of [
      ['frobnicate'],
      ['workflows', 'get'],
      ['run', 'x', '--input', '{not json'],
      ['workflows', 'list', '--bogus'],
      ['executions', 'list', '--status', 'sleeping'],
      ['runs', 'show'],
    ]) {
      const result = await cli(args, env);
      expect(result.code, args.join(' ')).to.equal(2);
      expect(result.stderr).to.match(/^error: /);
    }

    const missing = await cli(['workflows', 'get', 'no-such-workflow'], env);
    expect(missing.code).to.equal(3);
    expect(missing.stderr).to.include('workflow_not_found');
    expect(missing.stderr).to.match(/request_id req_\w+/);

    const asJson = await cli(['run', 'no-such-workflow', '--json'], env);
    expect(asJson.code).to.equal(3);
    const body = JSON.parse(asJson.stderr) as { error: { code: string; request_id: string; status: number } };
    expect(body.error).to.include({ code: 'workflow_not_found', status: 404 });
    expect(body.error.request_id).to.match(/^req_/);

    const badKey = await cli(['workflows', 'list'], { ...env, SWITCHYARD_API_KEY: 'sk_wrong' });
    expect(badKey.code).to.equal(3);
    expect(badKey.stderr).to.include('unauthorized');
  });

  it('login saves the URL and key (mode 0600) for later commands; the environment wins over the file', async () => {
    const home = mkdtempSync(join(tmpdir(), 'sy-cli-login-'));
    const { key } = await service.newWorkspace(['read']);
    const login = await cli(['login', '--url', service.url, '--api-key', key], { XDG_CONFIG_HOME: home });
    expect(login.code, login.stderr).to.equal(0);
    const file = join(home, 'switchyard', 'config.json');
    expect(statSync(file).mode & 0o777).to.equal(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8'))).to.deep.equal({ url: service.url, api_key: key });

    const list = await cli(['workflows', 'list'], { XDG_CONFIG_HOME: home });
    expect(list.code, list.stderr).to.equal(0);
    expect(list.stdout.trim()).to.equal('No workflows.');

    const overridden = await cli(['workflows', 'list'], {
      XDG_CONFIG_HOME: home,
      SWITCHYARD_API_KEY: 'sk_wrong',
    });
    expect(overridden.code).to.equal(3);

    const refused = await cli(['login', '--url', service.url, '--api-key', 'sk_wrong'], {
      XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), 'sy-cli-login-')),
    });
    expect(refused.code).to.equal(3);
    expect(refused.stderr).to.include('unauthorized');
  });
});
