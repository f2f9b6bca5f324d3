/**
 * The production image starts, checked without a Docker engine: the Dockerfile's runtime stage is
 * reproduced in a folder (test/support/runtime-image.ts: its COPY lines done from the built checkout, its
 * node_modules the production packages only), and the API (the stage's CMD) and the worker (the worker's
 * command in docker-compose.yml) run from that folder against Temporal and PostgreSQL. A folder the stage
 * forgets to copy makes a process fail to start, or fail to serve what lives there.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { parse } from 'yaml';
import { newApiKey, randomBase62 } from '../../platform/ids';
import { projectRoot } from '../../platform/paths';
import { connectTemporal } from '../../platform/temporal/connection';
import { housekeepingScheduleId } from '../../workers/housekeeping-schedule';
import { BUNDLING_AT_START } from '../../workers/worker';
import { Managed, startUntilReady } from '../support/deployment';
import { parseDockerfile } from '../support/dockerfile';
import { createWorkflow, definition, rulesStep, trigger, waitForExecution } from '../support/fixtures';
import { freePort } from '../support/ports';
import { requiredPackages } from '../support/required-packages';
import { reproduceRuntimeStage, type RuntimeImage } from '../support/runtime-image';
import { apiClient, createPostgresDatabase, sharedTemporal, tempDir } from '../support/stack';

/**
 * Packages the entry points require that the image does not install, each with the file that copes
 * without it: the Temporal CLI download for `npm start`'s embedded dev server (a production process
 * connects to TEMPORAL_ADDRESS instead).
 */
const NOT_INSTALLED_IN_THE_IMAGE: Record<string, string> = {
  '@temporalio/testing': 'platform/temporal/cli.ts',
};

const readProjectFile = (name: string) => fs.readFileSync(path.join(projectRoot, name), 'utf8');

/** The script of a `node <script>` command (the image runs nothing else). */
function scriptOf(command: string[]): string {
  expect(command, `a command of the image: ${JSON.stringify(command)}`).to.have.length(2);
  expect(command[0], `a command of the image: ${JSON.stringify(command)}`).to.equal('node');
  return command[1]!;
}

function workerCommand(): string[] {
  const compose = parse(readProjectFile('docker-compose.yml'), { merge: true }) as {
    services: Record<string, { command?: string[] | string }>;
  };
  const command = compose.services['worker']?.command;
  if (command === undefined) throw new Error('docker-compose.yml gives the worker no command');
  return Array.isArray(command) ? command : command.split(/\s+/).filter(Boolean);
}

describe('the production image (the Dockerfile runtime stage, without Docker) @integration', function () {
  this.timeout(120_000);
  let image: RuntimeImage;

  before(() => {
    const stages = parseDockerfile(readProjectFile('Dockerfile'));
    // The last stage: what `docker build` (and docker-compose.yml, which names no target) builds.
    image = reproduceRuntimeStage(stages, stages[stages.length - 1]!, tempDir('sy-image-'));
  });
  after(() => {
    if (image) fs.rmSync(image.root, { recursive: true, force: true });
  });

  it("requires at run time only packages of package.json's dependencies", () => {
    const { dependencies } = JSON.parse(readProjectFile('package.json')) as {
      dependencies: Record<string, string>;
    };
    const entryFolder = path.join(image.root, 'dist/processes');
    const entries = fs
      .readdirSync(entryFolder)
      .filter((name) => name.endsWith('.js'))
      .map((name) => path.join(entryFolder, name));
    const undeclared = [...requiredPackages(entries)]
      .filter(([name]) => !(name in dependencies) && !(name in NOT_INSTALLED_IN_THE_IMAGE))
      .map(
        ([name, files]) => `${name} (by ${files.map((file) => path.relative(image.root, file)).join(', ')})`,
      );
    expect(undeclared, `required, but not in dependencies: ${undeclared.join('; ')}`).to.deep.equal([]);
  });

  describe('its API and worker, started as docker-compose.yml starts them', () => {
    const adminKey = newApiKey();
    const taskQueue = `image-${randomBase62(8)}`;
    let api: Managed;
    let worker: Managed;
    let url: string;
    let temporalAddress: string;
    let dropDatabase: (() => Promise<void>) | undefined;

    before(async () => {
      const database = await createPostgresDatabase();
      dropDatabase = () => database.drop();
      temporalAddress = (await sharedTemporal()).address;
      const port = await freePort();
      url = `http://127.0.0.1:${port}`;
      const env = {
        ...image.env,
        HOST: '127.0.0.1',
        PORT: String(port),
        DATABASE_URL: database.url,
        TEMPORAL_ADDRESS: temporalAddress,
        TEMPORAL_TASK_QUEUE: taskQueue,
        SECRETS_KEY: crypto.randomBytes(32).toString('base64'),
        PAYLOAD_ENCRYPTION_KEYS: `k1:${crypto.randomBytes(32).toString('base64')}`,
        BOOTSTRAP_API_KEY: adminKey,
        LOG_LEVEL: 'info',
      };
      api = new Managed('the API', scriptOf(image.cmd), () => env, image.root);
      worker = new Managed('the worker', scriptOf(workerCommand()), () => env, image.root);
      await startUntilReady(api, url);
      worker.start();
      await worker.waitForOutput(/Worker running/);
    });
    after(async function () {
      this.timeout(60_000);
      await worker?.kill('SIGTERM');
      await api?.kill('SIGTERM');
      // The worker's housekeeping schedule would outlive it on the shared dev server.
      if (temporalAddress) {
        const temporal = await connectTemporal({
          connectionOptions: { address: temporalAddress },
          namespace: 'default',
        });
        await temporal.client.schedule
          .getHandle(housekeepingScheduleId(taskQueue))
          .delete()
          .catch(() => undefined);
        await temporal.connection.close();
      }
      await dropDatabase?.();
    });

    it('the API answers /readyz', async () => {
      const res = await request(url).get('/readyz');
      expect(res.status, `${JSON.stringify(res.body)}\n${api.output.slice(-2000)}`).to.equal(200);
    });

    it('the API serves the console and its assets', async () => {
      const page = await request(url).get('/').set('Accept', 'text/html');
      expect(page.status, page.text).to.equal(200);
      const script = /<script[^>]*\ssrc="(\/assets\/[^"]+\.js)"/.exec(page.text)?.[1];
      expect(script, `the console page names no script: ${page.text}`).to.be.a('string');
      await request(url).get(script!).expect(200);
    });

    it('the API serves the API reference at /docs', async () => {
      const res = await request(url).get('/docs');
      expect(res.status, res.text).to.equal(200);
    });

    it('the worker runs a triggered workflow to success', async () => {
      const client = apiClient(url, adminKey);
      const workflowId = await createWorkflow(
        client,
        definition([rulesStep('answer', [{ when: 'true', output: 42 }])]),
      );
      const execution = await waitForExecution(client, await trigger(client, workflowId));
      expect(execution.status, `${JSON.stringify(execution)}\n${worker.output.slice(-2000)}`).to.equal(
        'success',
      );
    });

    it('the worker runs the workflow bundle the image ships, not one bundled at start', () => {
      expect(worker.output).to.not.include(BUNDLING_AT_START);
    });
  });
});
