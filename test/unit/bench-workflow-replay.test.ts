/** The benchmark's workflow_replay scenario (bench/scenarios/workflow-replay.ts) on a few replays. */
import { expect } from 'chai';
import { benchWorkflowReplay, workflowReplaySettingsFromEnv } from '../../bench/scenarios/workflow-replay';
import { workflowBundlePath } from '../../platform/paths';

describe('bench: workflow_replay', () => {
  it('replays a history of the corpus and counts the CPU and the promises of workflow code per replay', async () => {
    const results = await benchWorkflowReplay({
      histories: ['execution-connector.json'],
      bundle: workflowBundlePath,
      replays: 5,
      warmup: 1,
    });
    const result = results['execution-connector'];
    expect(result?.replays).to.equal(5);
    expect(result?.cpu_ms_per_replay, 'CPU per replay').to.be.greaterThan(0);
    // Zero would mean the SDK no longer marks workflow promises with their run id: the count is broken.
    expect(result?.workflow_promises_per_replay, 'workflow promises per replay').to.be.greaterThan(5);
  });

  it('reads its settings from the environment, and refuses a count that is not a positive whole number', () => {
    const settings = workflowReplaySettingsFromEnv({
      BENCH_REPLAYS: '20',
      BENCH_REPLAY_HISTORIES: 'execution-rules.json, execution-ai.json',
    });
    expect(settings).to.include({ replays: 20, warmup: 50, bundle: workflowBundlePath });
    expect(settings.histories).to.deep.equal(['execution-rules.json', 'execution-ai.json']);
    expect(() => workflowReplaySettingsFromEnv({ BENCH_REPLAYS: '0' })).to.throw(/BENCH_REPLAYS/);
  });
});
