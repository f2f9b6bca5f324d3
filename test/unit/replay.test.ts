/**
 * The replay corpus (test/replay/README.md): histories written by real runs, replayed with the SDK's
 * replayer against the workflow bundle `npm run build` wrote. A change to workflow code that would make
 * a run in flight fail on its next task (non-determinism) fails here first.
 */
import { Worker } from '@temporalio/worker';
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { projectRoot, workflowBundlePath } from '../../src/paths';

const corpus = path.join(projectRoot, 'test', 'replay', 'histories');

describe('the replay corpus', () => {
  const files = fs.readdirSync(corpus).filter((name) => name.endsWith('.json'));

  it('holds histories to replay', () => {
    expect(files, corpus).to.not.be.empty;
  });

  for (const file of files) {
    it(`replays ${file} on the current workflow code`, async () => {
      const history: unknown = JSON.parse(fs.readFileSync(path.join(corpus, file), 'utf8'));
      expect(fs.existsSync(workflowBundlePath), `${workflowBundlePath} (npm run build writes it)`).to.equal(
        true,
      );
      // Throws DeterminismViolationError (or the workflow's own failure) when the code no longer fits.
      await Worker.runReplayHistory({ workflowBundle: { codePath: workflowBundlePath } }, history, file);
    });
  }
});
