/**
 * docs/operations.md#temporal-ui-and-cli: what operators see in Temporal (UI, CLI): search attributes,
 * activities per step, summaries.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { defaultPayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import {
  createWorkflow,
  definition,
  httpStep,
  rulesStep,
  trigger,
  waitForExecution,
} from '../support/fixtures';
import { Receiver } from '../support/receiver';
import { sharedTemporal, startTestService, type TestService } from '../support/stack';
import { waitFor } from '../support/wait';
import {
  TRIGGER_ATTRIBUTE,
  VERSION_ATTRIBUTE,
  WAITING_ATTRIBUTE,
  WORKFLOW_ATTRIBUTE,
  WORKSPACE_ATTRIBUTE,
} from '../../core/search-attributes';

const run = promisify(execFile);

describe('operators in Temporal @integration', function () {
  let service: TestService;
  let receiver: Receiver;
  let workflowId: string;
  let executionId: string;
  before(async function () {
    this.timeout(120_000);
    service = await startTestService();
    receiver = await Receiver.start();
    workflowId = await createWorkflow(
      service.api(),
      definition(
        [
          rulesStep('route', [{ when: 'true', output: 1 }], { name: 'Route the customer' }),
          httpStep('crm', { url: `${receiver.url}/c` }),
        ],
        {
          name: 'Operator test',
        },
      ),
    );
    executionId = await trigger(service.api(), workflowId);
    await waitForExecution(service.api(), executionId);
  });
  after(async () => {
    await receiver?.stop();
    await service?.stop();
  });

  const handle = () => service.runtime.services.temporal.client.workflow.getHandle(executionId);

  it('runs each execution as a Temporal workflow whose id is the execution id', async () => {
    const description = await handle().describe();
    expect(description.workflowId).to.equal(executionId);
    expect(description.type).to.equal('execution');
    expect(description.taskQueue).to.equal(service.config.temporal.taskQueue);
  });

  it('sets the workspace, workflow, version and trigger search attributes', async () => {
    const attributes = (await handle().describe()).typedSearchAttributes;
    expect(attributes.get(WORKSPACE_ATTRIBUTE)).to.equal('default');
    expect(attributes.get(WORKFLOW_ATTRIBUTE)).to.equal(workflowId);
    expect(attributes.get(VERSION_ATTRIBUTE)).to.equal(1);
    expect(attributes.get(TRIGGER_ATTRIBUTE)).to.equal('api');
    expect(attributes.get(WAITING_ATTRIBUTE)).to.equal(false);
  });

  it('names the workflow and version in the static summary', async () => {
    expect(await (await handle().describe()).staticSummary()).to.equal(`Operator test (${workflowId} v1)`);
  });

  it('runs each step in a local activity whose summary names it: rules steps with the step that follows', async () => {
    const history = await handle().fetchHistory();
    const localActivities = (history.events ?? [])
      .filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity')
      .map((e) => {
        const data = e.markerRecordedEventAttributes!.details!['data']!.payloads![0]!.data!;
        const marker = JSON.parse(Buffer.from(data).toString('utf8')) as { activity_type: string };
        return {
          type: marker.activity_type,
          summary: defaultPayloadConverter.fromPayload(e.userMetadata!.summary!),
        };
      });
    // One local activity: the workspace's place under its cap rides in it (docs/flow-control.md#workspace-cap).
    expect(localActivities).to.deep.equal([{ type: 'run_steps', summary: 'Route the customer → crm' }]);
    // The step records in the marker's result are what the API reads.
    const scheduled = (history.events ?? []).filter(
      (e) => e.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
    );
    expect(scheduled, 'no activity round trip for steps that succeed at once').to.have.length(0);
  });

  it('retries a failing connector step as an activity whose id is the step id and whose summary is its name', async () => {
    receiver.replyOnceTo('/flaky', { status: 503, body: 'busy' });
    const flaky = await createWorkflow(
      service.api(),
      definition([
        httpStep(
          'flaky',
          { url: `${receiver.url}/flaky` },
          { name: 'Call the flaky API', retry: { max_attempts: 2, initial_interval: '100ms' } },
        ),
      ]),
    );
    const id = await trigger(service.api(), flaky);
    expect((await waitForExecution(service.api(), id)).status).to.equal('success');
    const history = await service.runtime.services.temporal.client.workflow.getHandle(id).fetchHistory();
    const scheduled = (history.events ?? [])
      .filter((e) => e.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)
      .map((e) => ({
        id: e.activityTaskScheduledEventAttributes!.activityId,
        type: e.activityTaskScheduledEventAttributes!.activityType!.name,
        summary: defaultPayloadConverter.fromPayload(e.userMetadata!.summary!),
      }));
    expect(scheduled).to.deep.equal([{ id: 'flaky', type: 'connector_http', summary: 'Call the flaky API' }]);
  });

  it('finds the run with `temporal workflow list --query` on the search attributes', async () => {
    const { cliPath, address } = await sharedTemporal();
    const query = `SwitchyardWorkflow = '${workflowId}' AND SwitchyardWorkspace = 'default'`;
    const listed = await waitFor(
      async () => {
        const { stdout } = await run(cliPath, [
          'workflow',
          'list',
          '--address',
          address,
          '--query',
          query,
          '--output',
          'json',
        ]);
        const runs = JSON.parse(stdout || '[]') as { execution: { workflowId: string } }[];
        return runs.length > 0 ? runs : undefined;
      },
      { what: 'the CLI to list the run' },
    );
    expect(listed.map((r) => r.execution.workflowId)).to.deep.equal([executionId]);
  });

  it('raises the namespace retention to 30 days', async () => {
    const { connection } = service.runtime.services.temporal;
    const described = await connection.workflowService.describeNamespace({ namespace: 'default' });
    expect(Number(described.config!.workflowExecutionRetentionTtl!.seconds)).to.equal(30 * 24 * 3600);
  });
});
