/**
 * The worker's activity interceptor (workers/telemetry.ts): the run's request id reaches every log line of
 * the activity, and failed attempts are counted by their error code.
 */
import { expect } from 'chai';
import type { Context } from '@temporalio/activity';
import { ApplicationFailure, defaultPayloadConverter } from '@temporalio/common';
import { REQUEST_ID_HEADER } from '../../core/telemetry';
import { metrics } from '../../platform/observability/metrics';
import { activityTelemetry, failureCode } from '../../workers/telemetry';

const contextOf = (activityType: string) =>
  ({ info: { activityType, workflowExecution: { workflowId: 'ex_1', runId: 'r' } } }) as unknown as Context;

describe('activity telemetry', () => {
  it("adds the run's request id (from the activity header) to the activity's log attributes", async () => {
    const interceptors = activityTelemetry(contextOf('run_steps'));
    await interceptors.inbound!.execute!(
      { args: [], headers: { [REQUEST_ID_HEADER]: defaultPayloadConverter.toPayload('req_abc') } },
      () => Promise.resolve('ok'),
    );
    const attributes = interceptors.outbound!.getLogAttributes!(
      { activityType: 'run_steps' },
      (input) => input,
    );
    expect(attributes).to.deep.equal({ activityType: 'run_steps', requestId: 'req_abc' });
  });

  it('adds nothing when the run has no request id (a scheduled run)', async () => {
    const interceptors = activityTelemetry(contextOf('run_steps'));
    await interceptors.inbound!.execute!({ args: [], headers: {} }, () => Promise.resolve('ok'));
    expect(interceptors.outbound!.getLogAttributes!({ a: 1 }, (input) => input)).to.deep.equal({ a: 1 });
  });

  it('counts a failed attempt by activity and error code, and times a connector retry as a connector step', async () => {
    const before =
      (await metrics.activityFailures.get()).values.find(
        (v) => v.labels['activity'] === 'connector_http' && v.labels['code'] === 'http_status',
      )?.value ?? 0;
    const steps = async () =>
      (await metrics.stepDuration.get()).values.find(
        (v) =>
          v.metricName === 'switchyard_step_duration_seconds_count' &&
          v.labels['kind'] === 'connector' &&
          v.labels['status'] === 'failed',
      )?.value ?? 0;
    const stepsBefore = await steps();
    const interceptors = activityTelemetry(contextOf('connector_http'));
    const failure = ApplicationFailure.create({ type: 'http_status', message: 'answered 500' });
    let thrown: unknown;
    await interceptors.inbound!.execute!({ args: [], headers: {} }, () => Promise.reject(failure)).catch(
      (error: unknown) => (thrown = error),
    );
    expect(thrown).to.equal(failure);
    const after = (await metrics.activityFailures.get()).values.find(
      (v) => v.labels['activity'] === 'connector_http' && v.labels['code'] === 'http_status',
    )?.value;
    expect(after).to.equal(before + 1);
    expect(await steps()).to.equal(stepsBefore + 1);
  });

  it('names an error by its ApplicationFailure type, else its name', () => {
    expect(failureCode(ApplicationFailure.create({ type: 'network_error', message: 'x' }))).to.equal(
      'network_error',
    );
    expect(failureCode(new TypeError('x'))).to.equal('TypeError');
    expect(failureCode('boom')).to.equal('unknown');
  });
});
