/**
 * docs/tutorial.md, run as printed. Its `bash` blocks run in order in one bash session
 * (`set -euo pipefail`, at the root of the repository) against a fresh service, so an example that no
 * longer works fails here. The tutorial's commands check their own results (`curl --fail-with-body`,
 * `wait_for`, `test`), and afterwards this test reads back what the tutorial should have left behind.
 *
 * Blocks marked `<!-- tutorial: skip ... -->` are the ones this test does itself, the way the reader does:
 * - `npm ci && npm start`, and the restart with the AI settings: the service is `node dist/processes/main.js`
 *   (what `npm start` runs once it has built) with its defaults — its own Temporal dev server, PGlite in a
 *   data folder, the demo seeded — started once, with the settings of the restart block (read from the
 *   block itself), on free ports: the tutorial's `SWITCHYARD_URL` points at it;
 * - `npm run fake-ai`: the same fake provider, in this process, on a free port (AI_BASE_URL follows it).
 * The shell gets what the reader's second terminal has: DATA_DIR (so `npm run admin` finds the service's
 * database, as `./.data` does for the reader), SWITCHYARD_URL, and RECEIVER_PORT for the webhook receiver.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { FakeAiProvider } from '../../scripts/fake-ai-provider';
import { loadConfig } from '../../platform/config';
import { projectRoot } from '../../platform/paths';
import { ensureTemporalCli } from '../../platform/temporal/cli';
import { runBash, type BashResult } from '../support/bash-script';
import { fencedBlocks, type FencedBlock } from '../support/markdown';
import { freePort } from '../support/ports';
import { keyFromAdminOutput, ServiceProcess } from '../support/service-process';
import { apiClient, tempDir, testLogger, type ApiClient } from '../support/stack';
import { waitFor } from '../support/wait';

const TUTORIAL = path.join(projectRoot, 'docs', 'tutorial.md');
/** What `npm run fake-ai` listens on (scripts/fake-ai-provider.ts), as the tutorial prints it. */
const FAKE_AI_DEFAULT_BASE_URL = 'http://127.0.0.1:4010/v1';
const SKIP_MARKER = /^tutorial:\s*skip\b/;
/** The only commands the test may run in the reader's place: starting the service or the fake provider. */
const SKIPPABLE_LINE = /^(?:npm ci && npm start|(?:[A-Z_]+=\S+ )*npm start|npm run fake-ai)$/;

interface Tutorial {
  runnable: FencedBlock[];
  skipped: FencedBlock[];
}

function readTutorial(): Tutorial {
  const blocks = fencedBlocks(fs.readFileSync(TUTORIAL, 'utf8')).filter((block) => block.lang === 'bash');
  const skipped = blocks.filter((block) => block.marker !== undefined && SKIP_MARKER.test(block.marker));
  return { runnable: blocks.filter((block) => !skipped.includes(block)), skipped };
}

/** The commands of a block, without comments and blank lines. */
function commandLines(block: FencedBlock): string[] {
  return block.code
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

/** `A=1 B=2 npm start` → {A: '1', B: '2'}: the settings of the skipped service blocks. */
function serviceSettings(skipped: FencedBlock[]): Record<string, string> {
  const settings: Record<string, string> = {};
  for (const line of skipped.flatMap(commandLines)) {
    if (!line.endsWith('npm start')) continue;
    for (const [, name, value] of line.matchAll(/([A-Z_]+)=(\S+) /g)) settings[name!] = value!;
  }
  return settings;
}

/** The script bash runs: every runnable block in order, each announced so a failure names its line. */
function script(runnable: FencedBlock[]): string {
  return [
    'set -euo pipefail',
    `trap 'echo "tutorial: a command failed in the block at docs/tutorial.md:$TUTORIAL_BLOCK" >&2' ERR`,
    ...runnable.map((block) => `TUTORIAL_BLOCK=${block.line}\n${block.code}`),
    '',
  ].join('\n');
}

describe('the tutorial, run as printed @integration', function () {
  this.timeout(600_000);
  const tutorial = readTutorial();
  let fakeAi: FakeAiProvider;
  let service: ServiceProcess;
  let dataDir: string;
  let workDir: string;
  let result: BashResult;
  let api: ApiClient;

  before(async () => {
    dataDir = tempDir('sy-tutorial-data-');
    workDir = tempDir('sy-tutorial-');
    fakeAi = await FakeAiProvider.start();
    const settings = serviceSettings(tutorial.skipped);
    if (settings['AI_BASE_URL'] === FAKE_AI_DEFAULT_BASE_URL) settings['AI_BASE_URL'] = fakeAi.baseUrl;
    service = new ServiceProcess({
      ...settings,
      DATA_DIR: dataDir,
      PORT: String(await freePort()),
      TEMPORAL_DEV_PORT: String(await freePort()),
      TEMPORAL_UI_PORT: '0',
      TEMPORAL_CLI_PATH: await ensureTemporalCli(process.env['TEMPORAL_CLI_PATH'], testLogger),
      LOG_LEVEL: 'warn',
    });
    await service.start();

    const scriptFile = path.join(workDir, 'tutorial.sh');
    fs.writeFileSync(scriptFile, script(tutorial.runnable));
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATA_DIR: dataDir,
      SWITCHYARD_URL: service.url,
      RECEIVER_PORT: String(await freePort()),
      XDG_CONFIG_HOME: workDir,
    };
    // What the reader's shell does not have: settings of the test run that would change the commands.
    for (const name of ['SWITCHYARD_API_KEY', 'DATABASE_URL', 'TEMPORAL_ADDRESS', 'PORT']) delete env[name];
    const began = Date.now();
    result = await runBash(scriptFile, projectRoot, env, 300_000);
    // TEST_LOG_LEVEL=debug shows what the reader would see.
    testLogger.debug(
      { ms: Date.now() - began, code: result.code, output: result.output },
      'The tutorial ran',
    );
    api = apiClient(service.url, keyFromAdminOutput(await service.admin('create-key', '--scopes', 'read')));
  });

  after(async () => {
    await service?.stop('SIGINT');
    await fakeAi?.stop();
    for (const dir of [dataDir, workDir]) if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('skips only the blocks that start the service or the fake provider, and starts them as printed', () => {
    expect(tutorial.skipped, 'skipped blocks').to.have.length.greaterThan(0);
    for (const block of tutorial.skipped) {
      for (const line of commandLines(block)) {
        expect(line, `docs/tutorial.md:${block.line} may not be skipped`).to.match(SKIPPABLE_LINE);
      }
    }
    expect(commandLines(tutorial.skipped[0]!)).to.deep.equal(['npm ci && npm start']);
    // The printed provider settings are the ones `npm run fake-ai` prints, and the URL the tutorial
    // defaults to is where `npm start` listens.
    expect(serviceSettings(tutorial.skipped)['AI_BASE_URL']).to.equal(FAKE_AI_DEFAULT_BASE_URL);
    expect(tutorial.runnable[0]?.code).to.include(
      `SWITCHYARD_URL=\${SWITCHYARD_URL:-http://127.0.0.1:${loadConfig({}).port}}`,
    );
  });

  it('runs every other bash block, in order, without a failure', () => {
    expect(result.code, `the tutorial failed:\n${result.output.slice(-6000)}`).to.equal(0);
  });

  describe('leaves what it says it does', () => {
    before(function () {
      if (result.code !== 0) this.skip();
    });

    it('retried the failed demo run to success with the corrected input', async () => {
      const runs = await waitFor(
        async () => {
          const res = await api.get('/v1/executions?workflow=customer-onboarding&limit=100');
          const data = res.body.data as { execution_id: string; status: string }[];
          return data.length >= 3 && data.every((run) => run.status === 'success') ? data : undefined;
        },
        { what: 'the demo runs in the list' },
      );
      const retried = await Promise.all(
        runs.map(async (run) => (await api.get(`/v1/executions/${run.execution_id}`)).body),
      );
      const eve = retried.find((run) => run.steps[0].input.customer === 'Eve');
      expect(eve?.steps[1].status, 'the retried step').to.equal('success');
      expect(eve?.steps[2].output).to.deep.equal({ message: 'Welcome, Eve! You are on the starter plan.' });
    });

    it('ran all four kinds, kept the secret out of the record, approved one run and canceled another', async () => {
      const runs = await waitFor(
        async () => {
          const res = await api.get('/v1/executions?workflow=vip-onboarding');
          const data = res.body.data as { execution_id: string; status: string }[];
          const statuses = data.map((run) => run.status).sort();
          return statuses.join() === 'canceled,success' ? data : undefined;
        },
        { what: 'a canceled and a successful vip-onboarding run' },
      );
      for (const run of runs) {
        const body = JSON.stringify((await api.get(`/v1/executions/${run.execution_id}`)).body);
        expect(body).not.to.include('s3cr3t-token');
      }
      const approvedId = runs.find((run) => run.status === 'success')!.execution_id;
      const approved = (await api.get(`/v1/executions/${approvedId}`)).body as {
        steps: { id: string; kind: string; status: string; output: { decision?: string } | null }[];
      };
      expect(approved.steps.map((step) => step.kind)).to.include.members([
        'rules',
        'connector',
        'ai',
        'approval',
      ]);
      expect(approved.steps.find((step) => step.id === 'review')?.output?.decision).to.equal('approved');
      expect(fakeAi.requests.length, 'requests the fake AI provider answered').to.be.greaterThan(0);
    });

    it('delivered a signed event to the receiver, as the delivery log shows', async () => {
      const endpoints = (await api.get('/v1/webhooks')).body.data as { id: string }[];
      expect(endpoints).to.have.length(1);
      const deliveries = (await api.get(`/v1/webhooks/${endpoints[0]!.id}/deliveries`)).body.data as {
        status: string;
        event: string;
      }[];
      expect(deliveries.some((d) => d.status === 'succeeded' && d.event === 'execution.completed')).to.equal(
        true,
      );
      expect(result.output).to.match(/received execution\.completed for ex_\S+ success/);
    });

    it('started the webhook-trigger workflow through a signed inbound hook, once', async () => {
      const runs = await waitFor(
        async () => {
          const data = (await api.get('/v1/executions?workflow=new-signup')).body.data as {
            status: string;
            trigger: { type: string };
          }[];
          return data.length > 0 ? data : undefined;
        },
        { what: 'the hook run in the list' },
      );
      expect(runs.map((run) => [run.trigger.type, run.status])).to.deep.equal([['webhook', 'success']]);
    });
  });
});
