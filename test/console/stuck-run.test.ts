/**
 * A run stuck on a build in the console (docs/operations.md#runs-stuck-on-a-build): moved onto a build
 * whose workflow code cannot replay it (test/support/next-build/workflows.ts), its page says so, with the
 * build, the reason, since when and how to recover; once the move is undone, the banner goes.
 */
import { expect } from 'chai';
import type { Runtime } from '../../processes/runtime';
import { createWorkflow, trigger, waitForExecution } from '../support/fixtures';
import type { ApiClient } from '../support/stack';
import {
  moveRun,
  nextBuildBundle,
  nudgeRun,
  startWorkerOfBuild,
  undoMove,
  versionOf,
} from '../support/worker-builds';
import { onboardingDefinition } from './fixtures';
import {
  expectAccessible,
  expectNoErrors,
  openSignedIn,
  startConsoleHarness,
  type ConsoleHarness,
  type ConsoleTab,
} from './harness';

describe('Console: a run stuck on a build @browser', function () {
  this.timeout(180_000);
  let harness: ConsoleHarness;
  let nextBuild: Runtime;
  let key: string;
  let api: ApiClient;
  let tab: ConsoleTab | undefined;

  before(async () => {
    // PostgreSQL: a second worker process shares the service's database.
    harness = await startConsoleHarness({ db: 'postgres' });
    // Polls only: it takes no new run and moves none (WORKER_ROLLOUT=manual).
    nextBuild = await startWorkerOfBuild(
      harness.service.config,
      { rollout: 'manual' },
      await nextBuildBundle(),
    );
    const workspace = await harness.service.newWorkspace(['write']);
    key = workspace.key;
    api = harness.service.api(key);
  });
  afterEach(async () => {
    await tab?.close();
    tab = undefined;
  });
  after(async () => {
    await nextBuild?.stop();
    await harness?.close();
  });

  it('shows a banner with the build, the reason, since when and how to recover; it goes once the run is moved back', async () => {
    const client = harness.service.runtime.services.temporal.client;
    const wf = await createWorkflow(api, onboardingDefinition());
    const id = await trigger(api, wf, { customer: 'Ada', plan: 'enterprise' });
    await waitForExecution(api, id, (e) => e.status === 'waiting');
    const buildB = versionOf(nextBuild).buildId;
    await moveRun(client, id, versionOf(nextBuild));
    await nudgeRun(client, id);
    await waitForExecution(api, id, (e) => e.stalled !== null);

    tab = await openSignedIn(harness, key, { path: `/runs/${id}` });
    const { page } = tab;
    const banner = page.getByRole('region', { name: 'Stuck run' });
    await banner.waitFor();
    const text = (await banner.textContent()) ?? '';
    expect(text).to.include(`This run is stuck on build ${buildB}`);
    expect(text).to.include('cannot replay the run (a non-determinism error');
    expect(text).to.match(/kept failing since \S/);
    expect(text).to.match(/attempt \d+/);
    expect(text).to.match(/nondeterminism/i); // the failure's message
    expect(text).to.include('Runs stuck on a build');
    expect(text).to.include('docs/operations.md');
    await expectAccessible(page, 'a stuck run');

    // The documented recovery: undo the move; the run's own build replays it, and the page reads it again.
    await undoMove(client, id);
    await banner.waitFor({ state: 'detached', timeout: 60_000 });
    expect(await page.getByRole('button', { name: 'Approve' }).count()).to.equal(1);
    expectNoErrors(tab.watch);
  });
});
