/**
 * The replay corpus (test/replay/README.md): histories written by real runs, each replayed with the SDK's
 * replayer against the workflow bundle `npm run build` wrote. A change to workflow code that would make
 * a run in flight fail on its next task (non-determinism) fails here first. The replayer runs with the
 * payload encryption codec, as a worker with PAYLOAD_ENCRYPTION_KEYS set does: histories written in clear
 * pass through it (test/integration/encryption.test.ts replays an encrypted one).
 */
import { randomBytes } from 'node:crypto';
import { Worker } from '@temporalio/worker';
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { projectRoot, workflowBundlePath } from '../../platform/paths';
import { dataConverterOf, payloadCodecsOf } from '../../platform/temporal/encryption-codec';
import { installTemporalRuntime } from '../../workers/worker';
import { testLogger } from '../support/stack';

const replayDir = path.join(projectRoot, 'test', 'replay');
const corpus = path.join(replayDir, 'histories');
const manifest = path.join(replayDir, 'README.md');
const dataConverter = dataConverterOf(payloadCodecsOf([{ id: 'replay', key: randomBytes(32) }]));

interface HistoryJson {
  events: {
    workflowExecutionStartedEventAttributes?: { workflowType?: { name?: string }; workflowId?: string };
  }[];
}

function readHistory(file: string): HistoryJson {
  return JSON.parse(fs.readFileSync(path.join(corpus, file), 'utf8')) as HistoryJson;
}

/** What to do when a history no longer replays: the rule of docs/development.md#changing-workflow-code. */
function replayFailure(file: string, workflowType: string, error: unknown): string {
  const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return [
    `test/replay/histories/${file} (a run of the \`${workflowType}\` workflow) no longer replays on the current`,
    `workflow code (${workflowBundlePath}): ${reason}`,
    'Runs like it that are in flight when this build is deployed would fail their next workflow task.',
    'Keep their path: branch the change with `patched()` from @temporalio/workflow (old histories take',
    'the old branch), or ship it as a new worker build',
    '(docs/operations.md#deploys-worker-builds-and-versioning). Do not re-record or edit this history; add',
    'new ones with `npm run record-histories`.',
    'docs/development.md#changing-workflow-code and test/replay/README.md say more.',
  ].join('\n');
}

describe('the replay corpus', () => {
  const files = fs
    .readdirSync(corpus)
    .filter((name) => name.endsWith('.json'))
    .sort();

  // The SDK's own logger would print every replay worker's state changes.
  before(() => installTemporalRuntime(testLogger));

  it('holds histories, each listed in test/replay/README.md', () => {
    expect(files, corpus).to.not.be.empty;
    const listed = fs.readFileSync(manifest, 'utf8');
    expect(
      files.filter((file) => !listed.includes(`\`${file}\``)),
      'histories missing from the table in test/replay/README.md (npm run record-histories adds their rows)',
    ).to.deep.equal([]);
  });

  for (const file of files) {
    const history = readHistory(file);
    const workflowType =
      history.events[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name ?? 'unknown';
    const name = file.replace(/\.json$/, '');
    // The run's own workflow id where the history has it (what a worker replays with): workflow code may
    // name children after it (a large map's chunks). Older histories lack it; any id does for them.
    const workflowId = history.events[0]?.workflowExecutionStartedEventAttributes?.workflowId || name;
    it(`replays ${name} (${workflowType} workflow)`, async () => {
      expect(fs.existsSync(workflowBundlePath), `${workflowBundlePath} (npm run build writes it)`).to.equal(
        true,
      );
      try {
        // Throws DeterminismViolationError (or the workflow's own failure) when the code no longer fits.
        await Worker.runReplayHistory(
          { workflowBundle: { codePath: workflowBundlePath }, dataConverter },
          history,
          workflowId,
        );
      } catch (error) {
        throw new Error(replayFailure(file, workflowType, error), { cause: error });
      }
    });
  }
});
