/** What the schedule suites share: a service with a workspace of their own, schedule triggers and steps. */
import { rulesStep } from './fixtures';
import { startTestService, type ApiClient, type TestService, type TestServiceOptions } from './stack';

export interface ScheduleSuite {
  service: TestService;
  /** A client with the suite workspace's admin key. */
  api: ApiClient;
  workspaceId: string;
}

/**
 * Starts a service with a workspace of its own for the suite (no other test's executions or schedules) and
 * hands them to `ready` before its tests; when the suite ends, its workflows are deleted, and with them their
 * schedules, so that none keeps firing in the shared dev server.
 */
export function scheduleSuite(options: TestServiceOptions, ready: (suite: ScheduleSuite) => void): void {
  let suite: ScheduleSuite | undefined;
  before(async function () {
    this.timeout(120_000);
    const service = await startTestService(options);
    const workspace = await service.newWorkspace();
    suite = { service, api: service.api(workspace.key), workspaceId: workspace.workspaceId };
    ready(suite);
  });
  after(async function () {
    this.timeout(30_000);
    if (!suite) return;
    await deleteWorkflows(suite.api);
    await suite.service.stop();
  });
}

/** Deletes the workspace's workflows (up to 100), and with them their schedules. */
export async function deleteWorkflows(api: ApiClient): Promise<void> {
  const res = await api.get('/v1/workflows?limit=100');
  for (const { id } of (res.body.data ?? []) as { id: string }[]) await api.delete(`/v1/workflows/${id}`);
}

/** Fires on weekdays at 09:00 in Paris: never during a test run that does not cross 09:00 there. */
export const weekdayMornings = (extra: Record<string, unknown> = {}) => ({
  type: 'schedule',
  cron: '0 9 * * 1-5',
  timezone: 'Europe/Paris',
  input: { customer: 'Ada' },
  ...extra,
});

/** One step whose output is the execution's input. */
export const echo = () => [rulesStep('echo', [{ when: 'true', output: '{{ input }}' }])];
