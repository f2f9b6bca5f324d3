/**
 * The reads every trigger and every run makes, cached per process and emptied by change notices
 * (changes.ts): a workflow's version (the latest, or a given one), the hook secrets of a workflow id,
 * the workflows an event name triggers, a workspace's subscribed event kinds, a workspace's limit overrides
 * (which every run's workspace cap reads: workspace-admissions.ts). A trigger through the signed
 * hook reads nothing else from the database. Cached records are shared: callers must not change them.
 */
import type { EventKind } from '../../core/event-types';
import { hookCandidates, type SealedHookCandidate } from './hook-secrets';
import { ReadCache, type ChangeFeed } from './changes';
import type { Queryable } from './db';
import { subscribedEventKinds } from './webhooks';
import { getWorkflowVersion, workflowsTriggeredBy, type WorkflowVersionRecord } from './workflows';
import { readLimitOverrides } from './workspace-limits';
import type { LimitName, LimitValue } from '../../core/workspace-limits';

export class CachedReads {
  private readonly versions: ReadCache<WorkflowVersionRecord | undefined>;
  private readonly hooks: ReadCache<SealedHookCandidate[]>;
  private readonly eventKinds: ReadCache<EventKind[]>;
  private readonly eventTriggers: ReadCache<Awaited<ReturnType<typeof workflowsTriggeredBy>>>;
  private readonly limitOverrides: ReadCache<Map<LimitName, LimitValue>>;

  constructor(
    private readonly db: Queryable,
    feed: ChangeFeed,
  ) {
    this.versions = new ReadCache(feed, 'workflows');
    this.hooks = new ReadCache(feed, 'workflows');
    this.eventKinds = new ReadCache(feed, 'webhooks');
    this.eventTriggers = new ReadCache(feed, 'workflows');
    this.limitOverrides = new ReadCache(feed, 'limits');
  }

  /** A version of a workflow (the latest when `version` is undefined). */
  workflowVersion(workspaceId: string, workflowId: string, version?: number) {
    return this.versions.get(`${workspaceId}\u0000${workflowId}\u0000${version ?? 'latest'}`, () =>
      getWorkflowVersion(this.db, workspaceId, workflowId, version),
    );
  }

  /** The sealed hook secrets of every workflow with this id whose latest version has a webhook trigger. */
  hookCandidates(workflowId: string) {
    return this.hooks.get(workflowId, () => hookCandidates(this.db, workflowId));
  }

  /** The workflows whose latest version has an event trigger for events of this name. */
  eventTriggeredWorkflows(workspaceId: string, eventName: string) {
    return this.eventTriggers.get(`${workspaceId}\u0000${eventName}`, () =>
      workflowsTriggeredBy(this.db, workspaceId, eventName),
    );
  }

  /** The event kinds some enabled endpoint of the workspace subscribes to. */
  subscribedEventKinds(workspaceId: string) {
    return this.eventKinds.get(workspaceId, () => subscribedEventKinds(this.db, workspaceId));
  }

  /** A limit in effect for a workspace: the operator's override, else `defaultValue`. */
  workspaceLimit(workspaceId: string, name: LimitName, defaultValue: LimitValue): Promise<LimitValue> {
    // A reaction rather than an async function: one promise where that makes two, on every run's path.
    return this.limitOverrides
      .get(workspaceId, () => readLimitOverrides(this.db, workspaceId))
      .then((overrides) => (overrides.has(name) ? overrides.get(name)! : defaultValue));
  }
}
