/**
 * Temporal Schedules of schedule-trigger workflows (docs/definitions.md#schedule-trigger). A workflow whose
 * latest version has a schedule trigger has one Schedule, `switchyard:<workspace>:<workflow>`, whose action
 * starts an execution exactly as the trigger endpoint does (same workflow type, task queue, search attributes
 * and definition snapshot) with `trigger.type = "schedule"` and the trigger's `input`.
 *
 * Saves call syncSchedule after their transaction commits, deletes call removeSchedule before theirs (see
 * src/definitions/lifecycle.ts: no database connection waits on Temporal): Temporal down is a 503 and a
 * spec Temporal rejects is a 400, and either way the save is undone. What can still drift (a process
 * dying between the two, a delete whose rows stayed after its schedule went, a schedule deleted by hand)
 * is put right by reconcileSchedules at every API start.
 */
import { isDeepStrictEqual } from 'node:util';
import { status as grpcStatus } from '@grpc/grpc-js';
import {
  ScheduleNotFoundError,
  type ScheduleDescription,
  type ScheduleOptions,
  type ScheduleOptionsAction,
} from '@temporalio/client';
import type { Duration, Priority } from '@temporalio/common';
import { msOptionalToNumber, msToNumber } from '@temporalio/common/lib/time';
import { AppError } from '../../platform/errors';
import { scheduledExecutionIdPrefix } from '../../platform/ids';
import type { Services } from '../services';
import type { Trigger } from '../../core/definitions/schema';
import { invalidDefinition } from './validate';
import { executionStartOptions } from '../executions/trigger';
import { getWorkflowVersion, type WorkflowVersionRecord } from '../../platform/store/workflows';
import { callTemporal, grpcCodeOf } from '../../platform/temporal/errors';
import { overlapPolicyOf, putSchedule } from '../../platform/temporal/put-schedule';
import { EXECUTION_WORKFLOW_TYPE, type ExecutionInput } from '../../core/execution-types';
import { WORKFLOW_ATTRIBUTE, WORKSPACE_ATTRIBUTE } from '../../core/search-attributes';
import { runDefinition } from '../../core/definitions/run-definition';

type ScheduleTrigger = Extract<Trigger, { type: 'schedule' }>;

/** Our schedules' ids start with this; workspace and workflow ids never contain ":". */
export const SCHEDULE_ID_PREFIX = 'switchyard:';

export const scheduleIdOf = (workspaceId: string, workflowId: string): string =>
  `${SCHEDULE_ID_PREFIX}${workspaceId}:${workflowId}`;

function parseScheduleId(scheduleId: string): { workspaceId: string; workflowId: string } | undefined {
  if (!scheduleId.startsWith(SCHEDULE_ID_PREFIX)) return undefined;
  const rest = scheduleId.slice(SCHEDULE_ID_PREFIX.length);
  const separator = rest.lastIndexOf(':');
  if (separator <= 0 || separator === rest.length - 1) return undefined;
  return { workspaceId: rest.slice(0, separator), workflowId: rest.slice(separator + 1) };
}

/**
 * Missed runs (Temporal or the scheduler down) are taken afterwards only when at most this late, so a
 * restart after a long outage does not fire a burst of stale runs.
 */
export const CATCHUP_WINDOW: Duration = '1m';
/** Reconcile leaves younger orphans alone: they may belong to a save whose transaction has not committed. */
const ORPHAN_GRACE_MS = 60_000;
const LIST_TIMEOUT_MS = 30_000;

/** Makes the workflow's schedule match this (newly saved, latest) version. */
export async function syncSchedule(
  services: Services,
  workspaceId: string,
  record: WorkflowVersionRecord,
): Promise<void> {
  if (record.definition.trigger?.type !== 'schedule') {
    // Version 1 of a workflow has no schedule to remove (a deleted workflow's went with it).
    if (record.version > 1) await removeSchedule(services, workspaceId, record.workflow_id);
    return;
  }
  await upsertSchedule(services, await scheduleOptions(services, workspaceId, record));
}

/** Deletes the workflow's schedule, if it has one. Runs it started go on. */
export async function removeSchedule(
  services: Services,
  workspaceId: string,
  workflowId: string,
): Promise<void> {
  await deleteSchedule(services, scheduleIdOf(workspaceId, workflowId));
}

/** The schedule a version with a schedule trigger has in Temporal. */
export async function scheduleOptions(
  services: Services,
  workspaceId: string,
  record: WorkflowVersionRecord,
): Promise<ScheduleOptions> {
  const { definition } = record;
  const trigger = definition.trigger as ScheduleTrigger;
  const scheduleId = scheduleIdOf(workspaceId, record.workflow_id);
  const input = await scheduledExecutionInput(services, workspaceId, record, trigger);
  // Temporal appends each run's nominal time to this prefix: `ex_<20 base62>-2026-11-21T21:40:00Z`.
  const start = executionStartOptions(services, scheduledExecutionIdPrefix(scheduleId), input);
  // The SDK sends an action's priority (its schedule-helpers) though the option type (1.24) leaves it out.
  const action: ScheduleOptionsAction & { priority: Priority } = {
    type: 'startWorkflow',
    workflowType: EXECUTION_WORKFLOW_TYPE,
    workflowId: start.workflowId,
    taskQueue: start.taskQueue,
    args: start.args,
    typedSearchAttributes: start.typedSearchAttributes,
    staticSummary: start.staticSummary,
    priority: start.priority,
    ...(definition.timeout ? { workflowExecutionTimeout: definition.timeout as Duration } : {}),
  };
  return {
    scheduleId,
    spec:
      trigger.cron !== undefined
        ? { cronExpressions: [trigger.cron], timezone: trigger.timezone }
        : { intervals: [{ every: trigger.every as Duration }] },
    action,
    policies: {
      // A run still going when the next one is due: skipped unless the trigger says otherwise.
      overlap: overlapPolicyOf(trigger.overlap),
      catchupWindow: CATCHUP_WINDOW,
    },
    // On the schedule itself, so `temporal schedule list --query` finds a workspace's schedules.
    typedSearchAttributes: [
      { key: WORKSPACE_ATTRIBUTE, value: workspaceId },
      { key: WORKFLOW_ATTRIBUTE, value: record.workflow_id },
    ],
  };
}

/** What every scheduled run starts with: the definition snapshot and the trigger's validated input. */
async function scheduledExecutionInput(
  services: Services,
  workspaceId: string,
  record: WorkflowVersionRecord,
  trigger: ScheduleTrigger,
): Promise<ExecutionInput> {
  const received = trigger.input ?? {};
  let input: unknown = structuredClone(received);
  // Checked on save already; this guards versions saved before that check existed.
  if (record.definition.input_schema) {
    const checked = await services.schemas.validate(workspaceId, record.definition.input_schema, input);
    if (checked.problems.length > 0) {
      throw invalidDefinition(
        checked.problems.map((p) => ({ path: `/trigger/input${p.path}`, message: p.message })),
      );
    }
    input = checked.value;
  }
  const executionInput: ExecutionInput = {
    workspaceId,
    workflow: {
      id: record.workflow_id,
      version: record.version,
      definition: runDefinition(record.definition),
    },
    trigger: { type: 'schedule' },
    input,
    // Synced once for many runs: each asks for its place, and the activity reads the cap in effect then.
    workspace_cap: true,
    // As for a trigger: its first batch asks the definition's gates (workers/workflows/admission.ts).
    ...((record.definition.concurrency || record.definition.throttle) && { gates_in_batch: true as const }),
  };
  // As for the trigger endpoint: the trigger step shows the input as written when defaults changed it.
  if (!isDeepStrictEqual(input, received)) executionInput.trigger.body = received;
  return executionInput;
}

async function upsertSchedule(services: Services, options: ScheduleOptions): Promise<void> {
  const { client, connection } = services.temporal;
  try {
    await callTemporal(connection, () => putSchedule(client, options));
  } catch (error) {
    throw rejection(error, options) ?? error;
  }
}

/**
 * Temporal's INVALID_ARGUMENT as 400 invalid_definition, at the field it is about. "Invalid schedule
 * spec: <reason>" (a cron expression, time zone or interval Temporal cannot use) comes as a
 * ServiceError caused by the gRPC error over our NativeConnection (the client turns it into a TypeError
 * carrying the reason over a @grpc/grpc-js Connection); other invalid arguments as a ServiceError.
 */
function rejection(error: unknown, options: ScheduleOptions): AppError | undefined {
  if (error instanceof AppError) return undefined;
  let reason: string;
  if (error instanceof TypeError) reason = error.message;
  else if (grpcCodeOf(error) === grpcStatus.INVALID_ARGUMENT) reason = grpcReasonOf(error);
  else return undefined;
  const spec = /^(?:3 INVALID_ARGUMENT: )?Invalid schedule spec: ([^]*)$/.exec(reason);
  if (spec) reason = spec[1]!;
  const path =
    !spec && !(error instanceof TypeError)
      ? '/trigger'
      : /time ?zone/i.test(reason)
        ? '/trigger/timezone'
        : options.spec.cronExpressions
          ? '/trigger/cron'
          : '/trigger/every';
  return invalidDefinition([{ path, message: `Temporal rejected the schedule: ${reason}` }]);
}

/** The message of the gRPC error in a cause chain. */
function grpcReasonOf(error: unknown): string {
  for (let e: unknown = error; e; e = (e as { cause?: unknown }).cause) {
    const { code, details, message } = e as { code?: unknown; details?: unknown; message?: unknown };
    if (typeof code === 'number') {
      if (typeof details === 'string' && details !== '') return details;
      if (typeof message === 'string') return message;
    }
    if (e === (e as { cause?: unknown }).cause) break;
  }
  return (error as Error).message;
}

/** Deletes a schedule; false when there was none. */
async function deleteSchedule(services: Services, scheduleId: string): Promise<boolean> {
  const { client, connection } = services.temporal;
  try {
    await callTemporal(connection, () => client.schedule.getHandle(scheduleId).delete());
    return true;
  } catch (error) {
    if (error instanceof ScheduleNotFoundError) return false;
    throw error;
  }
}

async function describeSchedule(
  services: Services,
  scheduleId: string,
): Promise<ScheduleDescription | undefined> {
  const { client, connection } = services.temporal;
  try {
    return await callTemporal(connection, () => client.schedule.getHandle(scheduleId).describe());
  } catch (error) {
    if (error instanceof ScheduleNotFoundError) return undefined;
    throw error;
  }
}

/**
 * Whether a schedule in Temporal already does what `wanted` describes. The action (its definition
 * snapshot holds the trigger, cron text included), policies and interval/time zone are compared; a
 * cron spec edited by hand in Temporal is not detected (Temporal keeps it compiled, not as text).
 */
function isUpToDate(current: ScheduleDescription, wanted: ScheduleOptions): boolean {
  const action = current.action;
  const want = wanted.action;
  const every = wanted.spec.intervals?.[0]?.every;
  return (
    action.type === want.type &&
    action.workflowType === want.workflowType &&
    action.workflowId === want.workflowId &&
    action.taskQueue === want.taskQueue &&
    action.staticSummary === want.staticSummary &&
    action.priority?.fairnessKey === (want as { priority?: Priority }).priority?.fairnessKey &&
    action.workflowExecutionTimeout === msOptionalToNumber(want.workflowExecutionTimeout) &&
    isDeepStrictEqual(action.args, want.args) &&
    current.policies.overlap === wanted.policies?.overlap &&
    current.policies.catchupWindow === msToNumber(CATCHUP_WINDOW) &&
    (every === undefined
      ? (current.spec.timezone ?? '') === (wanted.spec.timezone ?? '') &&
        // Cron text compiles to calendars, except `@every ...`, which compiles to an interval.
        ((current.spec.intervals?.length ?? 0) === 0 || /^\s*@every\b/.test(wanted.spec.cronExpressions![0]!))
      : current.spec.intervals?.length === 1 &&
        current.spec.intervals[0]!.every === msToNumber(every) &&
        (current.spec.calendars?.length ?? 0) === 0)
  );
}

export interface ReconcileReport {
  /** Schedule ids created, updated and deleted. */
  created: string[];
  updated: string[];
  deleted: string[];
  failed: { scheduleId: string; message: string }[];
}

export interface ReconcileOptions {
  /** Orphans created or updated more recently than this are left for the next run (default 1 minute). */
  orphanGraceMs?: number;
}

/**
 * Makes Temporal match the database (run at API start): every workflow whose latest version has a
 * schedule trigger gets an up-to-date schedule, and our schedules (by id prefix, on this task queue)
 * whose workflow is gone or no longer scheduled are deleted. A schedule that cannot be put right is
 * logged and reported, and the others are still reconciled.
 */
export async function reconcileSchedules(
  services: Services,
  { orphanGraceMs = ORPHAN_GRACE_MS }: ReconcileOptions = {},
): Promise<ReconcileReport> {
  const report: ReconcileReport = { created: [], updated: [], deleted: [], failed: [] };
  const fail = (scheduleId: string, error: unknown) => {
    services.logger.warn({ err: error, scheduleId }, 'Could not reconcile a schedule');
    report.failed.push({ scheduleId, message: (error as Error).message });
  };

  const scheduled = await services.db.query<{ workspace_id: string; workflow_id: string }>(
    `select w.workspace_id, w.id as workflow_id
       from workflows w
       join workflow_versions v on v.workspace_id = w.workspace_id and v.workflow_id = w.id and v.version = w.latest_version
      where v.definition->'trigger'->>'type' = 'schedule'
      order by w.workspace_id, w.id`,
  );
  const wanted = new Set<string>();
  for (const { workspace_id: workspaceId, workflow_id: workflowId } of scheduled) {
    const scheduleId = scheduleIdOf(workspaceId, workflowId);
    wanted.add(scheduleId);
    try {
      const outcome = await reconcileOne(services, workspaceId, workflowId);
      if (outcome) report[outcome].push(scheduleId);
    } catch (error) {
      fail(scheduleId, error);
    }
  }

  const { client, connection } = services.temporal;
  const ours = await callTemporal(
    connection,
    async () => {
      const ids: string[] = [];
      for await (const schedule of client.schedule.list())
        if (schedule.scheduleId.startsWith(SCHEDULE_ID_PREFIX)) ids.push(schedule.scheduleId);
      return ids;
    },
    LIST_TIMEOUT_MS,
  );
  for (const scheduleId of ours) {
    if (wanted.has(scheduleId)) continue;
    try {
      if (await removeOrphan(services, scheduleId, orphanGraceMs)) report.deleted.push(scheduleId);
    } catch (error) {
      fail(scheduleId, error);
    }
  }

  if (report.created.length + report.updated.length + report.deleted.length > 0) {
    services.logger.info(
      { created: report.created, updated: report.updated, deleted: report.deleted },
      'Reconciled the Temporal Schedules with the database',
    );
  }
  return report;
}

/**
 * One scheduled workflow, under its row lock: saves and deletes take the same lock, so a reconcile
 * never writes an older version's schedule over a concurrent save's.
 */
async function reconcileOne(
  services: Services,
  workspaceId: string,
  workflowId: string,
): Promise<'created' | 'updated' | undefined> {
  return services.db.transaction(async (tx) => {
    const locked = await tx.query('select 1 from workflows where workspace_id = $1 and id = $2 for update', [
      workspaceId,
      workflowId,
    ]);
    if (locked.length === 0) return undefined; // deleted meanwhile, and its schedule with it
    const record = await getWorkflowVersion(tx, workspaceId, workflowId);
    // Saved meanwhile without a schedule trigger: that save removed the schedule.
    if (!record || record.definition.trigger?.type !== 'schedule') return undefined;
    const options = await scheduleOptions(services, workspaceId, record);
    const current = await describeSchedule(services, options.scheduleId);
    if (current && isUpToDate(current, options)) return undefined;
    await upsertSchedule(services, options);
    return current ? 'updated' : 'created';
  });
}

/** Deletes a schedule of ours that no workflow wants; false when it is left alone. */
async function removeOrphan(services: Services, scheduleId: string, graceMs: number): Promise<boolean> {
  const ids = parseScheduleId(scheduleId);
  if (!ids) return false;
  const description = await describeSchedule(services, scheduleId);
  if (!description) return false;
  // Another deployment sharing this namespace (another task queue) keeps its own schedules.
  if (description.action.taskQueue !== services.config.temporal.taskQueue) return false;
  // A save in flight writes its schedule before its transaction commits.
  const touched = description.info.lastUpdatedAt ?? description.info.createdAt;
  if (Date.now() - touched.getTime() < graceMs) return false;
  // Scheduled since the list was read.
  const record = await getWorkflowVersion(services.db, ids.workspaceId, ids.workflowId);
  if (record?.definition.trigger?.type === 'schedule') return false;
  return deleteSchedule(services, scheduleId);
}
