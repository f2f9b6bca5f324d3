/**
 * What a run keeps of its definition version in its workflow input, the start event of its history
 * (core/definitions/run-definition.ts): what the steps need, not the version's description, input_schema,
 * trigger or step descriptions, which the version in the database still has.
 */
import { expect } from 'chai';
import type { Definition } from '../../core/definitions/schema';
import { executionInputOf } from '../../src/executions/locate';
import { createWorkflow, trigger, uniqueId, waitForExecution } from '../support/fixtures';
import { startTestService, type TestService } from '../support/stack';

const LONG = 'Explains the workflow at length. '.repeat(60);

describe('the definition a run keeps in its history @integration', function () {
  let service: TestService;
  before(async function () {
    this.timeout(120_000);
    service = await startTestService();
  });
  after(async () => {
    await service?.stop();
  });

  const snapshotOf = async (executionId: string): Promise<Definition> =>
    (await executionInputOf(service.runtime.services, executionId, '')).workflow.definition;

  it('leaves out the description, input_schema, trigger and step descriptions, and the run reads as before', async () => {
    const workflowId = await createWorkflow(service.api(), {
      id: uniqueId('snapshot'),
      name: 'Snapshot',
      description: LONG,
      trigger: { type: 'api' },
      input_schema: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
      steps: [
        {
          id: 'greet',
          kind: 'rules',
          description: LONG,
          rules: [
            { when: 'true', output: { description: 'kept: user data', text: 'Hello {{ input.name }}' } },
          ],
        },
        {
          id: 'both',
          kind: 'parallel',
          description: 'a container',
          branches: [
            {
              id: 'left',
              steps: [
                { id: 'inner', kind: 'rules', description: LONG, rules: [{ when: 'true', output: 1 }] },
              ],
            },
          ],
        },
      ],
    });
    const executionId = await trigger(service.api(), workflowId, { name: 'Ada' });
    const execution = await waitForExecution(service.api(), executionId);
    expect(execution.status, JSON.stringify(execution.error)).to.equal('success');
    expect(execution.steps.map((step) => step.id)).to.include.members(['greet', 'both']);

    const snapshot = await snapshotOf(executionId);
    expect(snapshot, 'the definition in the run').to.not.have.any.keys(
      'description',
      'input_schema',
      'trigger',
    );
    expect(snapshot).to.include({ id: workflowId, name: 'Snapshot' });
    const [greet, both] = snapshot.steps as unknown as [
      Record<string, unknown>,
      { branches: { steps: object[] }[] },
    ];
    expect(greet).to.not.have.property('description');
    expect(greet['rules']).to.deep.equal([
      { when: 'true', output: { description: 'kept: user data', text: 'Hello {{ input.name }}' } },
    ]);
    expect(both).to.not.have.property('description');
    expect(both.branches[0]!.steps[0]).to.deep.equal({
      id: 'inner',
      kind: 'rules',
      rules: [{ when: 'true', output: 1 }],
    });

    // The version keeps all of it.
    const version = (await service.api().get(`/v1/workflows/${workflowId}`).expect(200)).body;
    expect(version.description).to.equal(LONG);
    expect(version.input_schema).to.have.property('required');
  });

  it('leaves them out of a child run too', async () => {
    const child = await createWorkflow(service.api(), {
      id: uniqueId('snapshot-child'),
      description: LONG,
      input_schema: { type: 'object', properties: { name: { type: 'string' } } },
      steps: [
        {
          id: 'echo',
          kind: 'rules',
          description: LONG,
          rules: [{ when: 'true', output: '{{ input.name }}' }],
        },
      ],
    });
    const parent = await createWorkflow(service.api(), {
      id: uniqueId('snapshot-parent'),
      steps: [{ id: 'call', kind: 'workflow', workflow: child, input: { name: 'Ada' } }],
    });
    const execution = await waitForExecution(service.api(), await trigger(service.api(), parent));
    expect(execution.status, JSON.stringify(execution.error)).to.equal('success');
    const childId = (execution.output as { execution_id: string }).execution_id;
    const snapshot = await snapshotOf(childId);
    expect(snapshot).to.not.have.any.keys('description', 'input_schema', 'trigger');
    expect(snapshot.steps[0]).to.not.have.property('description');
  });
});
