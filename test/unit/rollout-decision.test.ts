/**
 * What a starting worker does with its build (docs/operations.md#deploys-worker-builds-and-versioning): a
 * new build takes new runs; an old build restarted after another became current never takes them back.
 * The deployment is given as Temporal's DescribeWorkerDeployment answers it.
 */
import { expect } from 'chai';
import Long from 'long';
import type { temporal } from '@temporalio/proto';
import { rolloutDecision } from '../../platform/temporal/worker-deployment';

const DEPLOYMENT = 'switchyard';

/** A protobuf timestamp `seconds` after an arbitrary origin. */
const at = (seconds: number) => ({ seconds: Long.fromNumber(1_800_000_000 + seconds), nanos: 0 });

type Summary = temporal.api.deployment.v1.WorkerDeploymentInfo.IWorkerDeploymentVersionSummary;

function deployment(
  current: { buildId: string; since: number } | undefined,
  versions: (Summary & { buildId: string })[],
): temporal.api.deployment.v1.IWorkerDeploymentInfo {
  return {
    name: DEPLOYMENT,
    routingConfig: current
      ? {
          currentDeploymentVersion: { deploymentName: DEPLOYMENT, buildId: current.buildId },
          currentVersionChangedTime: at(current.since),
        }
      : {},
    versionSummaries: versions.map(({ buildId, ...summary }) => ({
      ...summary,
      deploymentVersion: { deploymentName: DEPLOYMENT, buildId },
    })),
  };
}

describe('worker rollout: what a starting worker does with its build', () => {
  it('makes the first build of a deployment current', () => {
    const info = deployment(undefined, [{ buildId: 'a', createTime: at(0) }]);
    expect(rolloutDecision(info, 'a')).to.deep.equal({ action: 'make-current', previous: undefined });
  });

  it('makes a new build current in place of the one before', () => {
    const info = deployment({ buildId: 'a', since: 1 }, [
      { buildId: 'a', createTime: at(0), currentSinceTime: at(1), firstActivationTime: at(1) },
      { buildId: 'b', createTime: at(10) },
    ]);
    expect(rolloutDecision(info, 'b')).to.deep.equal({ action: 'make-current', previous: 'a' });
  });

  it('leaves a build that is current as it is', () => {
    const info = deployment({ buildId: 'b', since: 11 }, [{ buildId: 'b', createTime: at(10) }]);
    expect(rolloutDecision(info, 'b')).to.deep.equal({ action: 'current' });
  });

  it('does not make an old build current again once another replaced it (a restart is no rollback)', () => {
    const info = deployment({ buildId: 'b', since: 11 }, [
      {
        buildId: 'a',
        createTime: at(0),
        firstActivationTime: at(1),
        lastCurrentTime: at(11),
        lastDeactivationTime: at(11),
      },
      { buildId: 'b', createTime: at(10), currentSinceTime: at(11), firstActivationTime: at(11) },
    ]);
    const decision = rolloutDecision(info, 'a');
    expect(decision).to.include({ action: 'stay', current: 'b' });
    expect(decision.action === 'stay' && decision.why).to.match(/build b replaced it/);
  });

  it('does not make a build current that first polled before the current one became current', () => {
    // Build a only ever polled (WORKER_ROLLOUT=manual, say); b became current after it.
    const info = deployment({ buildId: 'b', since: 11 }, [
      { buildId: 'a', createTime: at(0) },
      { buildId: 'b', createTime: at(10), currentSinceTime: at(11), firstActivationTime: at(11) },
    ]);
    const decision = rolloutDecision(info, 'a');
    expect(decision).to.include({ action: 'stay', current: 'b' });
    expect(decision.action === 'stay' && decision.why).to.match(
      /became current at .* after this build first polled/,
    );
  });

  it('leaves a build that an operator is ramping to the operator', () => {
    const info = deployment({ buildId: 'a', since: 1 }, [
      { buildId: 'a', createTime: at(0), currentSinceTime: at(1), firstActivationTime: at(1) },
      { buildId: 'b', createTime: at(10), rampingSinceTime: at(12), firstActivationTime: at(12) },
    ]);
    info.routingConfig!.rampingDeploymentVersion = { deploymentName: DEPLOYMENT, buildId: 'b' };
    const decision = rolloutDecision(info, 'b');
    expect(decision).to.include({ action: 'stay', current: 'a' });
    expect(decision.action === 'stay' && decision.why).to.match(/ramping this build/);
  });
});
