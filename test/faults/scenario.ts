/** Shared setup of the fault scenarios: a deployment, a receiver, a workflow and a webhook endpoint. */
import { Deployment, type DeploymentOptions } from '../support/deployment';
import { definition, type StepSpec } from '../support/fixtures';
import { Receiver } from '../support/receiver';

export const EVENTS_PATH = '/events';

export interface Scenario {
  deployment: Deployment;
  receiver: Receiver;
  workflowId: string;
  stop(): Promise<void>;
}

export async function startScenario(
  steps: (receiverUrl: string) => StepSpec[],
  options: DeploymentOptions & { events?: string[] } = {},
): Promise<Scenario> {
  const receiver = await Receiver.start();
  const deployment = new Deployment(options);
  try {
    await deployment.start();
    const client = deployment.client();
    await client
      .post('/v1/webhooks', {
        url: `${receiver.url}${EVENTS_PATH}`,
        events: options.events ?? ['execution.started', 'execution.completed'],
      })
      .expect(201);
    const body = definition(steps(receiver.url));
    await client.post('/v1/workflows', body).expect(201);
    return {
      deployment,
      receiver,
      workflowId: body['id'] as string,
      stop: async () => {
        await deployment.stop();
        await receiver.stop();
      },
    };
  } catch (error) {
    await deployment.stop().catch(() => undefined);
    await receiver.stop();
    throw error;
  }
}
