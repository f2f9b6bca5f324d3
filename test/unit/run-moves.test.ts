/**
 * Moving runs between builds (docs/operations.md#moving-runs-between-builds): a worker that stops in the
 * middle of a long move checks no further run (processes/runtime.ts aborts it), so its stop does not wait.
 */
import type { Client } from '@temporalio/client';
import { expect } from 'chai';
import { workflowBundlePath } from '../../platform/paths';
import { moveRuns } from '../../workers/run-moves';

describe('run moves', () => {
  it('checks no run once its signal is aborted', async () => {
    const touched: string[] = [];
    // Any use of the client would be a run checked after the stop.
    const client = new Proxy({} as Client, {
      get: (_target, property) => {
        touched.push(String(property));
        throw new Error(`the client was used (${String(property)}) after the move was aborted`);
      },
    });
    const stopping = new AbortController();
    stopping.abort();
    const outcomes = await moveRuns({
      client,
      target: { deploymentName: 'switchyard', buildId: 'next' },
      bundle: { codePath: workflowBundlePath },
      dataConverter: {},
      runs: [{ workflowId: 'ex_1', runId: 'run-1' }],
      identity: 'test',
      signal: stopping.signal,
    });
    expect(outcomes).to.deep.equal([]);
    expect(touched).to.deep.equal([]);
  });
});
