/**
 * Test-only workflow code (bundled by the crash-loop test, never by the service): a run whose input
 * says `crash_worker: true` runs, inside its first workflow task, a local activity that aborts the
 * worker process (crashing-service-main.ts registers it) — standing in for anything that takes a worker
 * down in the middle of a workflow task, as expressions evaluated in workflow code once did. Temporal times the task out and
 * hands it out again: a crash loop.
 */
import { proxyLocalActivities, type WorkflowInterceptorsFactory } from '@temporalio/workflow';

const { crash_worker } = proxyLocalActivities<{ crash_worker(): Promise<void> }>({
  startToCloseTimeout: '1 minute',
});

export const interceptors: WorkflowInterceptorsFactory = () => ({
  inbound: [
    {
      async execute(input, next) {
        const [execution] = input.args as [{ input?: { crash_worker?: boolean } } | undefined];
        if (execution?.input?.crash_worker === true) await crash_worker();
        return next(input);
      },
    },
  ],
});
