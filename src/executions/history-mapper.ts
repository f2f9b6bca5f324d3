/**
 * Temporal history → the execution the API shows (docs/api.md#executions). Pure: events in, view out.
 *
 * Steps are recorded by the `run_steps` local activity (workers/activities/steps.ts): each of its markers
 * carries one record per step it ran (input, output, timings, attempts, error). A retry run carries the
 * records of the steps before the failed one in its input (ExecutionInput.resume). Beside them:
 *  - a connector or ai step whose first attempt failed goes on as an activity whose id is the step id:
 *    its attempts, result or failure complete the step's record (pending ones from describe);
 *  - an approval step's decision comes from the `decide` Update's events;
 *  - a sleep step's end from its timer's events (sleep-timers.ts);
 *  - a wait_for_event step's end from the `end_event_wait` marker: the step's final record;
 *  - a rules step's input (the data it read) is derived from the context, as the worker saw it;
 *  - whether the run is stuck on a failing workflow task (src/executions/stalled.ts).
 * While a batch runs, its first step shows as running (its record lands when the batch ends).
 * Steps inside containers carry their run path; a container's entry and each loop iteration's `until` are
 * `evaluate_control` markers (the step lists and runs: step-lists.ts).
 */
import { defaultPayloadConverter, type PayloadCodec } from '@temporalio/common';
import { optionalTsToDate } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import {
  DECIDE_UPDATE,
  EXECUTION_WORKFLOW_TYPE,
  MAP_CHUNK_WORKFLOW_TYPE,
  type MapChunkInput,
  type MapChunkResult,
  type ApprovalDecision,
  type ApprovalDecisionRequest,
  type ControlResult,
  type ExecutionInput,
  type ExpressionContext,
  type RunPath,
  type StepBatchResult,
  type StepRecord,
} from '../../core/execution-types';
import type { ExecutionError } from '../../core/error-detail';
import {
  ADMITTED_SIGNAL,
  THROTTLE_ADMITTED_SIGNAL,
  WORKSPACE_ADMITTED_SIGNAL,
  type AdmissionResult,
  type EndDebounceResult,
  type WorkspacePlaceResult,
} from '../../core/flow-control';
import {
  durationMs,
  errorViewOf,
  RUNS_SHOWN,
  type ExecutionStatus,
  type ExecutionView,
  type RunView,
  type StepView,
} from './views';
import { closedFromOutsideError, closedStatusOfEvent, openStatus } from './status';
import { QUEUED_ATTRIBUTE } from '../../core/search-attributes';
import { stalledOf, type StalledSource } from './stalled';
import { decodePayloads } from '../../platform/temporal/encryption-codec';
import { failureMessage } from './failure-message';
import { stepKey, type Close, type RetryActivity } from './step-views';
import { SleepTimers } from './sleep-timers';
import {
  mapList,
  type ChildRun,
  type ChunkRun,
  topListFrame,
  type ContainerControls,
  type ListSources,
} from './step-lists';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
type Payloads = temporal.api.common.v1.IPayloads | null | undefined;
type Failure = temporal.api.failure.v1.IFailure | null | undefined;
type PendingActivity = temporal.api.workflow.v1.IPendingActivityInfo;
const EventType = temporal.api.enums.v1.EventType;

/** Marker name of local activities (Temporal's core SDK), the activity that runs steps, the one that steers containers. */
const LOCAL_ACTIVITY_MARKER = 'core_local_activity';
const STEP_BATCH_ACTIVITY = 'run_steps';
const CONTROL_ACTIVITY = 'evaluate_control';
/** The local activity that ends a wait_for_event's wait: its result is the step's final record. */
const END_EVENT_WAIT_ACTIVITY = 'end_event_wait';
/** Flow control's first act (workers/workflows/admission.ts): its result says whether the run was queued. */
const ACQUIRE_ADMISSION_ACTIVITY = 'acquire_admission';
/** Flow control's throttle gate, after the concurrency's: its result says whether the run waited. */
const ACQUIRE_THROTTLE_ACTIVITY = 'acquire_throttle';
/** A debounced run's question when its timer fires: once `started`, its result holds the last trigger's input. */
const END_DEBOUNCE_ACTIVITY = 'end_debounce';
/** The workspace's cap, after both (workers/workflows/workspace-cap.ts): its result says whether the run waited. */
const ACQUIRE_WORKSPACE_ACTIVITY = 'acquire_workspace_place';

export interface HistorySource {
  events: HistoryEvent[];
  /** From describe; empty for closed runs. */
  pendingActivities?: PendingActivity[];
  /** True while an approval waits (the SwitchyardWaiting search attribute). */
  waiting?: boolean;
  /** True while flow control holds the run back (the SwitchyardQueued search attribute). */
  queued?: boolean;
  /** From describe: the workflow task being retried, and the build it goes to (src/executions/stalled.ts). */
  pendingWorkflowTask?: StalledSource['pendingWorkflowTask'];
  versioningInfo?: StalledSource['versioningInfo'];
  now?: Date;
}

export function firstPayload(payloads: Payloads): unknown {
  const payload = payloads?.payloads?.[0];
  return payload ? defaultPayloadConverter.fromPayload(payload) : undefined;
}

/**
 * Decodes (decrypts, platform/temporal/encryption-codec.ts) in place the payloads that mapExecution and the
 * retry read: a history from Temporal holds them as the worker and the client wrote them. Nothing to do
 * without codecs; payloads written in clear pass through.
 */
export async function decodeHistory(events: HistoryEvent[], codecs: readonly PayloadCodec[]): Promise<void> {
  if (codecs.length === 0) return;
  const decodeIn = async (payloads: Payloads): Promise<void> => {
    if (payloads?.payloads?.length) payloads.payloads = await decodePayloads(codecs, payloads.payloads);
  };
  const work: Promise<void>[] = [];
  for (const event of events) {
    work.push(
      decodeIn(event.workflowExecutionStartedEventAttributes?.input),
      decodeIn(event.activityTaskCompletedEventAttributes?.result),
      decodeIn(event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.args),
      decodeIn(event.workflowExecutionUpdateCompletedEventAttributes?.outcome?.success),
      decodeIn(event.workflowExecutionCompletedEventAttributes?.result),
      decodeIn(event.workflowExecutionFailedEventAttributes?.failure?.applicationFailureInfo?.details),
      decodeIn(event.startChildWorkflowExecutionInitiatedEventAttributes?.input),
      decodeIn(event.childWorkflowExecutionCompletedEventAttributes?.result),
    );
    const details = event.markerRecordedEventAttributes?.details;
    if (details) for (const key of Object.keys(details)) work.push(decodeIn(details[key]));
    // A sleep's timer names its step in its summary (sleep-timers.ts).
    const metadata = event.timerStartedEventAttributes ? event.userMetadata : undefined;
    if (metadata?.summary)
      work.push(
        decodePayloads(codecs, [metadata.summary]).then(([summary]) => {
          metadata.summary = summary;
        }),
      );
    work.push(decodeFailure(event.activityTaskFailedEventAttributes?.failure, codecs));
    // A workflow task the worker fails outside workflow code (decoding its activation, say) carries a
    // failure of the worker's failure converter, encoded while payloads are encrypted.
    work.push(decodeFailure(event.workflowTaskFailedEventAttributes?.failure, codecs));
  }
  await Promise.all(work);
}

/**
 * Decodes in place a failure's encoded message (the worker's failure converter puts it in a payload while
 * payloads are encrypted: workers/failure-converter.ts), along its causes.
 */
export async function decodeFailure(failure: Failure, codecs: readonly PayloadCodec[]): Promise<void> {
  for (let current = failure; current && codecs.length > 0; current = current.cause) {
    if (current.encodedAttributes)
      [current.encodedAttributes] = await decodePayloads(codecs, [current.encodedAttributes]);
  }
}

const eventDate = (event: HistoryEvent): Date => optionalTsToDate(event.eventTime) ?? new Date(0);

/** The code and message of a failure, without stack traces or Temporal internals. */
export function describeFailure(failure: Failure): { code: string; message: string } {
  if (!failure) return { code: 'step_failed', message: 'The step failed.' };
  if (failure.applicationFailureInfo) {
    return {
      code: failure.applicationFailureInfo.type || 'step_failed',
      message: failureMessage(failure) ?? '',
    };
  }
  if (failure.timeoutFailureInfo) return { code: 'step_timed_out', message: 'The step timed out.' };
  if (failure.canceledFailureInfo) return { code: 'canceled', message: 'The step was canceled.' };
  // Activity failures wrap the real cause.
  if (failure.activityFailureInfo && failure.cause) return describeFailure(failure.cause);
  return { code: 'step_failed', message: failureMessage(failure) ?? 'The step failed.' };
}

/** The execution as `GET /v1/executions/{id}` shows it: each container with its first RUNS_SHOWN runs. */
export function mapExecution(executionId: string, source: HistorySource): ExecutionView {
  const view = mapExecutionWithAllRuns(executionId, source);
  return { ...view, steps: view.steps.map(withFirstRuns) };
}

/** The runs a read shows (withFirstRuns): the first RUNS_SHOWN of each container, all the way down. */
export function shownRuns(steps: StepView[]): RunView[] {
  return steps.flatMap((step) =>
    (step.runs ?? []).slice(0, RUNS_SHOWN).flatMap((run) => [run, ...shownRuns(run.steps)]),
  );
}

/** A step view whose runs (and theirs, all the way down) are cut to the first RUNS_SHOWN. */
export function withFirstRuns(view: StepView): StepView {
  if (!view.runs) return view;
  const runs = view.runs.slice(0, RUNS_SHOWN).map((run) => ({ ...run, steps: run.steps.map(withFirstRuns) }));
  return { ...view, runs };
}

/** What the run was started with: the definition snapshot, the trigger, the input (and a retry's resume point). */
export function executionInputOf(executionId: string, source: Pick<HistorySource, 'events'>): ExecutionInput {
  const started = source.events[0]?.workflowExecutionStartedEventAttributes;
  if (!started) throw new Error(`History of ${executionId} does not start with WorkflowExecutionStarted`);
  const input = firstPayload(started.input) as ExecutionInput;
  applyDebounceEnd(input, debounceEndOf(input, source.events));
  return input;
}

/** A debounced run's end of its wait (docs/flow-control.md#debounce), once its history has it. */
export function debounceEndOf(
  input: ExecutionInput,
  events: HistoryEvent[],
): Extract<EndDebounceResult, { state: 'started' }> | undefined {
  if (!input.debounce || input.resume) return undefined;
  for (const event of events) {
    const marker = localActivityResult(event);
    if (marker?.type !== END_DEBOUNCE_ACTIVITY) continue;
    const result = marker.result as EndDebounceResult | undefined;
    if (result?.state === 'started') return result;
  }
  return undefined;
}

/**
 * The run ran with the last coalesced trigger's input, not the first's that it was started with: reads, a
 * retry and a rerun see that one (as workers/workflows/debounce.ts puts it in the run's input).
 */
export function applyDebounceEnd(
  input: ExecutionInput,
  end: Extract<EndDebounceResult, { state: 'started' }> | undefined,
): void {
  if (!end) return;
  input.input = end.input;
  if (end.body !== undefined) input.trigger.body = end.body;
  else delete input.trigger.body;
  if (end.event) input.trigger.event = end.event;
}

/** The execution with every run of every container (the runs list pages through them: runs.ts). */
export function mapExecutionWithAllRuns(executionId: string, source: HistorySource): ExecutionView {
  return readExecution(executionId, source).view;
}

/** An execution read from its history: the view, what it was started with, and what the view was read from. */
export interface ExecutionRead {
  view: ExecutionView;
  input: ExecutionInput;
  sources: ListSources;
}

/** Reads the history: the execution with every run of every container, and the sources of its steps. */
export function readExecution(executionId: string, source: HistorySource): ExecutionRead {
  const now = source.now ?? new Date();
  const input = executionInputOf(executionId, source);
  const startedAt = eventDate(source.events[0]!);

  const sources = collectSources(source.events, {
    pendingActivities: source.pendingActivities,
    now,
    carried: input.resume?.records,
    kept: keptViewsOf(input),
  });
  const { close } = sources;
  const status: ExecutionStatus = close?.status ?? openStatus(source);
  // The context as the worker saw it, step by step (a rules step's input is derived from it).
  const context: ExpressionContext = {
    input: input.input,
    steps: {},
    execution: { id: '', workflow: input.workflow.id, version: input.workflow.version },
  };
  // A run flow control held back (queued, or canceled while queued) reached no step: it shows none.
  const frame = { ...topListFrame(context), started: wasAdmitted(input, source.events) };
  const steps = mapList(input.workflow.definition.steps, frame, sources);
  const queue = queueTimesOf(source.events);
  const view: ExecutionView = {
    execution_id: executionId,
    workflow: input.workflow.id,
    workflow_version: input.workflow.version,
    status,
    trigger: { type: input.trigger.type },
    parent: input.parent ? { execution_id: input.parent.execution_id, step: input.parent.step } : null,
    rerun_of: input.rerun_of ?? null,
    started_at: startedAt.toISOString(),
    finished_at: close ? close.at.toISOString() : null,
    duration_ms: durationMs(startedAt, close?.at, now),
    error: close?.error ?? null,
    queued_at: queue.queuedAt?.toISOString() ?? null,
    admitted_at: queue.admittedAt?.toISOString() ?? null,
    queued_ms: queue.queuedAt ? durationMs(queue.queuedAt, queue.admittedAt ?? close?.at, now) : null,
    stalled: close ? null : stalledOf(source),
    output: close?.status === 'success' ? outputOf(close, steps) : null,
    steps: [triggerStep(input, startedAt, debounceEndOf(input, source.events)?.coalesced), ...steps],
  };
  return { view, input, sources };
}

/**
 * What a run's step lists are read from, gathered from its history: step records (with `carried`, a
 * retry's records of the steps before the failed one), container controls, activity attempts, decisions,
 * child executions and chunks, and how the run closed.
 */
function collectSources(
  events: HistoryEvent[],
  { pendingActivities, now, carried = [], kept = new Map() }: CollectOptions,
): ListSources {
  const startedAt = eventDate(events[0]!);
  const records = new Map<string, StepRecord>();
  for (const record of carried) records.set(record.id, record);
  const controls = new Map<string, ContainerControls>();
  const startedRuns = new Set<string>();
  const retries = new Map<string, RetryActivity>();
  const byScheduledId = new Map<string, RetryActivity>();
  const decisions = new DecisionLedger();
  const timers = new SleepTimers();
  /** Child executions of workflow steps, by the step's key; and by the event that initiated them. */
  const children = new Map<string, ChildRun>();
  const childByInitiatedId = new Map<string, ChildRun>();
  /** A large map's chunks, by the map's step key; and by the event that initiated them. */
  const chunks = new Map<string, ChunkRun[]>();
  const chunkByInitiatedId = new Map<string, ChunkRun>();
  let lastTaskStarted = startedAt;
  let close: Close | undefined;
  /** Ends the attempts of the activity that event `scheduledEventId` scheduled, as `event` says. */
  const endRetry = (
    event: HistoryEvent,
    scheduledEventId: unknown,
    end: Pick<RetryActivity, 'state'> & Partial<Pick<RetryActivity, 'output' | 'error'>>,
  ): void => {
    const retry = byScheduledId.get(String(scheduledEventId));
    if (retry) Object.assign(retry, { ...end, finishedAt: eventDate(event) });
  };

  for (const event of events) {
    const id = String(event.eventId);
    switch (event.eventType) {
      case EventType.EVENT_TYPE_MARKER_RECORDED: {
        const marker = localActivityResult(event);
        if (marker?.type === STEP_BATCH_ACTIVITY) {
          for (const record of (marker.result as StepBatchResult | undefined)?.records ?? []) {
            const key = stepKey(record.path ?? [], record.id);
            records.set(key, record);
            if (record.path) markStarted(startedRuns, record.path);
            if (record.status === 'waiting' && !record.waiting_for) decisions.waiting(key, record);
          }
        } else if (marker?.type === END_EVENT_WAIT_ACTIVITY) {
          const record = marker.result as StepRecord | undefined;
          if (record) records.set(stepKey(record.path ?? [], record.id), record);
        } else if (marker?.type === CONTROL_ACTIVITY) {
          addControl(controls, startedRuns, marker.result as ControlResult | undefined);
        }
        break;
      }
      case EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED:
        lastTaskStarted = eventDate(event);
        break;
      case EventType.EVENT_TYPE_TIMER_STARTED:
        timers.started(event);
        break;
      case EventType.EVENT_TYPE_TIMER_FIRED:
        timers.fired(event);
        break;
      case EventType.EVENT_TYPE_TIMER_CANCELED:
        timers.canceled(event);
        break;
      case EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED: {
        const attrs = event.startChildWorkflowExecutionInitiatedEventAttributes!;
        if (attrs.workflowType?.name === MAP_CHUNK_WORKFLOW_TYPE) {
          const chunkInput = firstPayload(attrs.input) as MapChunkInput | undefined;
          if (!chunkInput) break;
          const chunk: ChunkRun = {
            workflowId: attrs.workflowId ?? '',
            first: chunkInput.first,
            count: chunkInput.items.length,
            state: 'running',
            initiatedAt: eventDate(event),
            finishedAt: null,
          };
          const key = stepKey(chunkInput.frame.path, chunkInput.stepId);
          chunks.set(key, [...(chunks.get(key) ?? []), chunk]);
          chunkByInitiatedId.set(id, chunk);
          break;
        }
        if (attrs.workflowType?.name !== EXECUTION_WORKFLOW_TYPE) break;
        const parent = (firstPayload(attrs.input) as ExecutionInput | undefined)?.parent;
        if (!parent) break;
        const child: ChildRun = {
          executionId: attrs.workflowId ?? '',
          initiatedAt: eventDate(event),
          state: 'running',
          finishedAt: null,
          output: null,
        };
        children.set(stepKey(parent.path ?? [], parent.step), child);
        childByInitiatedId.set(id, child);
        break;
      }
      case EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED: {
        const attrs = event.childWorkflowExecutionStartedEventAttributes!;
        const chunk = chunkByInitiatedId.get(String(attrs.initiatedEventId));
        if (chunk && attrs.workflowExecution?.runId) chunk.runId = attrs.workflowExecution.runId;
        break;
      }
      case EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED: {
        const attrs = event.childWorkflowExecutionCompletedEventAttributes!;
        const chunk = chunkByInitiatedId.get(String(attrs.initiatedEventId));
        if (chunk) {
          const result = firstPayload(attrs.result) as MapChunkResult | undefined;
          Object.assign(chunk, { state: 'success', finishedAt: eventDate(event), ...(result && { result }) });
        }
        const child = childByInitiatedId.get(String(attrs.initiatedEventId));
        if (child) {
          const result = firstPayload(attrs.result) as { output?: unknown } | undefined;
          Object.assign(child, {
            state: 'success',
            finishedAt: eventDate(event),
            output: result?.output ?? null,
          });
        }
        break;
      }
      case EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_FAILED:
      case EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_CANCELED:
      case EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TERMINATED:
      case EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TIMED_OUT: {
        const initiated =
          event.childWorkflowExecutionFailedEventAttributes?.initiatedEventId ??
          event.childWorkflowExecutionCanceledEventAttributes?.initiatedEventId ??
          event.childWorkflowExecutionTerminatedEventAttributes?.initiatedEventId ??
          event.childWorkflowExecutionTimedOutEventAttributes?.initiatedEventId;
        const child = childByInitiatedId.get(String(initiated));
        if (child) Object.assign(child, { state: 'failed', finishedAt: eventDate(event) });
        const chunk = chunkByInitiatedId.get(String(initiated));
        const canceled = event.eventType === EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_CANCELED;
        if (chunk)
          Object.assign(chunk, { state: canceled ? 'canceled' : 'failed', finishedAt: eventDate(event) });
        break;
      }
      case EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED: {
        const attrs = event.activityTaskScheduledEventAttributes!;
        const retry: RetryActivity = {
          attempts: 0,
          state: 'running',
          finishedAt: null,
          output: null,
          error: null,
        };
        retries.set(attrs.activityId ?? '', retry);
        byScheduledId.set(id, retry);
        break;
      }
      case EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED: {
        const attrs = event.activityTaskStartedEventAttributes!;
        const retry = byScheduledId.get(String(attrs.scheduledEventId));
        if (retry) retry.attempts = attrs.attempt ?? 1;
        break;
      }
      case EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED: {
        const attrs = event.activityTaskCompletedEventAttributes!;
        endRetry(event, attrs.scheduledEventId, {
          state: 'success',
          output: firstPayload(attrs.result) ?? null,
        });
        break;
      }
      case EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED: {
        const attrs = event.activityTaskFailedEventAttributes!;
        endRetry(event, attrs.scheduledEventId, { state: 'failed', error: describeFailure(attrs.failure) });
        break;
      }
      case EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT: {
        const attrs = event.activityTaskTimedOutEventAttributes!;
        endRetry(event, attrs.scheduledEventId, {
          state: 'failed',
          error: { code: 'step_timed_out', message: 'The step timed out.' },
        });
        break;
      }
      case EventType.EVENT_TYPE_ACTIVITY_TASK_CANCELED: {
        const attrs = event.activityTaskCanceledEventAttributes!;
        endRetry(event, attrs.scheduledEventId, { state: 'canceled' });
        break;
      }
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED: {
        const request = event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest;
        if (request?.input && request.input.name === DECIDE_UPDATE) {
          const args = firstPayload(request.input.args) as ApprovalDecisionRequest | undefined;
          if (args) decisions.accepted(request.meta?.updateId ?? '', args);
        }
        break;
      }
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED: {
        const attrs = event.workflowExecutionUpdateCompletedEventAttributes;
        const decision = firstPayload(attrs?.outcome?.success) as ApprovalDecision | undefined;
        decisions.completed(attrs?.meta?.updateId ?? '', decision);
        break;
      }
      default:
        close ??= closeOf(event);
    }
  }

  for (const pending of pendingActivities ?? []) {
    const retry = retries.get(pending.activityId ?? '');
    if (!retry || retry.state !== 'running') continue;
    retry.attempts = pending.attempt ?? retry.attempts;
    if (pending.lastFailure) retry.error = describeFailure(pending.lastFailure);
    const next = optionalTsToDate(pending.nextAttemptScheduleTime);
    if (next) retry.nextAttemptAt = next;
  }

  return {
    records,
    retries,
    decisions: decisions.byStep,
    timers: timers.byStep,
    controls,
    startedRuns,
    children,
    chunks,
    kept,
    close,
    lastTaskStarted,
    now,
  };
}

/** What the steps of a chunk's items are read from: the chunk's own history (chunk-steps.ts). */
export function chunkSourcesOf(events: HistoryEvent[], now = new Date()): ListSources {
  return collectSources(events, { now });
}

interface CollectOptions {
  pendingActivities?: PendingActivity[] | undefined;
  now: Date;
  carried?: StepRecord[] | undefined;
  kept?: ListSources['kept'];
}

/**
 * A retry's kept runs (ResumePoint.kept): the runs of its top-level container that succeeded in the failed
 * run, as reads showed them then, by the container's step key and run key.
 */
function keptViewsOf(input: ExecutionInput): ListSources['kept'] {
  const kept = input.resume?.kept;
  const views = new Map<string, RunView>();
  for (const run of kept?.runs ?? []) views.set(run.key, run.view as RunView);
  const byContainer: ListSources['kept'] = new Map();
  if (kept) byContainer.set(stepKey([], kept.step), views);
  return byContainer;
}

/**
 * A succeeded execution's output: what the run recorded in its result, or, for runs recorded before
 * executions had outputs, the output of the last step that ran.
 */
function outputOf(close: Close, steps: StepView[]): unknown {
  if (close.result && 'output' in close.result) return close.result.output ?? null;
  return steps.findLast((step) => step.status === 'success')?.output ?? null;
}

/** Notes that the runs along `path` (each container's run key and the containers around it) have started. */
function markStarted(startedRuns: Set<string>, path: RunPath): void {
  for (let end = 2; end <= path.length; end += 2) startedRuns.add(path.slice(0, end).join('/'));
}

/** Files an `evaluate_control` result under its container: a container's entry, or a loop iteration's `until`. */
function addControl(
  controls: Map<string, ContainerControls>,
  startedRuns: Set<string>,
  result: ControlResult | undefined,
): void {
  const subject = result?.of;
  if (!result || !subject?.step) return;
  const path = subject.path ?? [];
  markStarted(startedRuns, path);
  // An entry is asked in the list around the container; an `until` in the iteration's own run.
  const key = subject.purpose === 'until' ? path.join('/') : stepKey(path, subject.step);
  const container = key.slice(0, subject.purpose === 'until' ? key.lastIndexOf('/') : undefined);
  let entry = controls.get(container);
  if (!entry) controls.set(container, (entry = { until: [] }));
  if (subject.purpose === 'enter') entry.enter = result;
  else if (subject.purpose === 'until') entry.until[Number(path[path.length - 1])] = result;
}

/**
 * Decisions on approvals, by the waiting step's key. A `decide` Update names the step, and its run (the run
 * keys of its containers, "3" or "crm/0") unless one run of that step waited: it decides that run.
 */
class DecisionLedger {
  readonly byStep = new Map<string, ApprovalDecision>();
  private readonly waitingByStep = new Map<string, { key: string; runKey: string }[]>();
  /** Accepted Updates not completed yet: the step key each decides. */
  private readonly updates = new Map<string, string>();

  /** A record of an approval step now waiting. */
  waiting(key: string, record: StepRecord): void {
    const runKey = (record.path ?? []).filter((_, i) => i % 2 === 1).join('/');
    const list = this.waitingByStep.get(record.id) ?? [];
    list.push({ key, runKey });
    this.waitingByStep.set(record.id, list);
  }

  accepted(updateId: string, request: ApprovalDecisionRequest): void {
    const waiting = (this.waitingByStep.get(request.step) ?? []).filter(
      (entry) => !this.byStep.has(entry.key) && ![...this.updates.values()].includes(entry.key),
    );
    const match =
      request.run === undefined ? waiting[0] : waiting.find((entry) => entry.runKey === request.run);
    this.updates.set(updateId, match?.key ?? request.step);
  }

  /** An Update completed: with the decision, or refused by the workflow (the step still waits). */
  completed(updateId: string, decision: ApprovalDecision | undefined): void {
    const key = this.updates.get(updateId);
    this.updates.delete(updateId);
    if (key !== undefined && decision) this.byStep.set(key, decision);
  }
}

/**
 * Whether the run got past flow control (docs/flow-control.md): with `concurrency` (or `throttle`), once
 * `acquire_admission` (`acquire_throttle`) answered `open` or its signal arrived (possibly before that
 * answer); and unless `acquire_workspace_place` (or the first `run_steps`, which asks for the place itself)
 * answered `queued` with no `workspace_admitted` signal since.
 */
function wasAdmitted(input: ExecutionInput, events: HistoryEvent[]): boolean {
  const { concurrency, throttle } = input.workflow.definition;
  // A debounced run still waiting for its key's quiet time (or canceled then) reached no step.
  if (input.debounce && !input.resume && !debounceEndOf(input, events)) return false;
  // Each gate the definition has passed: its acquire answered open, or its signal came.
  let placed = !concurrency;
  let started = !throttle;
  let workspaceQueued = false;
  let workspaceGranted = false;
  for (const event of events) {
    const signal = event.workflowExecutionSignaledEventAttributes?.signalName;
    if (signal === ADMITTED_SIGNAL) placed = true;
    else if (signal === THROTTLE_ADMITTED_SIGNAL) started = true;
    else if (signal === WORKSPACE_ADMITTED_SIGNAL) workspaceGranted = true;
    const marker = localActivityResult(event);
    // A run whose batches pass its gates (workers/workflows/admission.ts): their answers, as the acquires'.
    if (marker?.type === STEP_BATCH_ACTIVITY) {
      const answers = (marker.result as StepBatchResult | undefined)?.admission;
      const { concurrency, throttle, workspace } = answers ?? {};
      if (concurrency && 'state' in concurrency && concurrency.state === 'open') placed = true;
      if (throttle && 'state' in throttle && throttle.state === 'open') started = true;
      if (workspace && 'state' in workspace) workspaceQueued = workspace.state === 'queued';
      continue;
    }
    const result = marker?.result as AdmissionResult | WorkspacePlaceResult | undefined;
    if (!result || !('state' in result)) continue;
    if (marker?.type === ACQUIRE_WORKSPACE_ACTIVITY) workspaceQueued = result.state === 'queued';
    if (result.state !== 'open') continue;
    if (marker?.type === ACQUIRE_ADMISSION_ACTIVITY) placed = true;
    else if (marker?.type === ACQUIRE_THROTTLE_ACTIVITY) started = true;
  }
  return placed && started && (!workspaceQueued || workspaceGranted);
}

/**
 * When flow control queued the run and when it let it go (docs/flow-control.md#what-queued-means), from the
 * history alone. The run queued when SwitchyardQueued became true: in its start's search attributes (a
 * debounced run, queued from its first moment) or at its first upsert (admission.ts, held at a gate). It
 * was admitted by the last gate event before the upsert that set it false: the end of its debounce wait
 * (`end_debounce`), the `admitted` or `throttle_admitted` signal, or an acquire's answer (a run that took
 * its place after a wait, then found its throttle's window open), or, for gates passed in a batch of steps, the
 * start of the workflow task that ran it. Both null for a run that never queued;
 * `admittedAt` null while it is queued, or when it ended queued (canceled).
 */
function queueTimesOf(events: HistoryEvent[]): { queuedAt: Date | null; admittedAt: Date | null } {
  let queuedAt: Date | null = null;
  let admittedAt: Date | null = null;
  let lastGate: Date | null = null;
  let taskStarted: Date | null = null;
  for (const event of events) {
    const signal = event.workflowExecutionSignaledEventAttributes?.signalName;
    if (event.workflowTaskStartedEventAttributes) taskStarted = eventDate(event);
    const marker = signal === undefined ? localActivityResult(event) : undefined;
    const type = marker?.type;
    if (
      signal === ADMITTED_SIGNAL ||
      signal === THROTTLE_ADMITTED_SIGNAL ||
      type === END_DEBOUNCE_ACTIVITY ||
      type === ACQUIRE_ADMISSION_ACTIVITY ||
      type === ACQUIRE_THROTTLE_ACTIVITY
    )
      lastGate = eventDate(event);
    // A batch that passed the run's gates (workers/workflows/admission.ts) did so before its steps, in the
    // workflow task that ran it: its marker is written after them, at the task's end.
    else if (type === STEP_BATCH_ACTIVITY && (marker?.result as StepBatchResult | undefined)?.admission)
      lastGate = taskStarted ?? eventDate(event);
    const attributes =
      event.workflowExecutionStartedEventAttributes?.searchAttributes ??
      event.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes;
    const field = attributes?.indexedFields?.[QUEUED_ATTRIBUTE.name];
    if (!field) continue;
    const queued = defaultPayloadConverter.fromPayload<unknown>(field);
    if (queued === true && !queuedAt) queuedAt = eventDate(event);
    else if (queued === false && queuedAt && !admittedAt) admittedAt = lastGate ?? eventDate(event);
  }
  return { queuedAt, admittedAt };
}

/** A local activity's marker: its activity type and its result (the marker keeps no input). */
function localActivityResult(event: HistoryEvent): { type: string; result: unknown } | undefined {
  const attrs = event.markerRecordedEventAttributes;
  if (attrs?.markerName !== LOCAL_ACTIVITY_MARKER || attrs.failure) return undefined;
  const data = attrs.details?.['data']?.payloads?.[0]?.data;
  if (!data) return undefined;
  let marker: { activity_type?: string };
  try {
    marker = JSON.parse(Buffer.from(data).toString('utf8')) as { activity_type?: string };
  } catch {
    return undefined;
  }
  if (
    marker.activity_type !== STEP_BATCH_ACTIVITY &&
    marker.activity_type !== CONTROL_ACTIVITY &&
    marker.activity_type !== END_EVENT_WAIT_ACTIVITY &&
    marker.activity_type !== ACQUIRE_ADMISSION_ACTIVITY &&
    marker.activity_type !== ACQUIRE_THROTTLE_ACTIVITY &&
    marker.activity_type !== END_DEBOUNCE_ACTIVITY &&
    marker.activity_type !== ACQUIRE_WORKSPACE_ACTIVITY
  )
    return undefined;
  return { type: marker.activity_type, result: firstPayload(attrs.details?.['result']) };
}

function closeOf(event: HistoryEvent): Close | undefined {
  const status = closedStatusOfEvent(event.eventType);
  if (!status) return undefined;
  const at = eventDate(event);
  if (status === 'failed') {
    const failure = event.workflowExecutionFailedEventAttributes?.failure;
    const details = firstPayload(failure?.applicationFailureInfo?.details) as ExecutionError | undefined;
    const { code, message } = describeFailure(failure);
    // The details hold the message whole (the failure's own text names only the step when encrypted).
    const detailed = typeof details?.message === 'string' ? details.message : message;
    const error = errorViewOf({
      step: details?.step ?? null,
      path: details?.path,
      code,
      message: detailed,
      details: details?.details,
    });
    return { status, at, error };
  }
  if (status === 'success') {
    const result = firstPayload(event.workflowExecutionCompletedEventAttributes?.result) as Close['result'];
    return { status, at, error: null, ...(result && { result }) };
  }
  return {
    status,
    at,
    error: closedFromOutsideError(status, event.workflowExecutionTerminatedEventAttributes?.reason),
  };
}

function triggerStep(input: ExecutionInput, at: Date, coalesced?: number): StepView {
  const validated =
    input.resume && 'original_input' in input.resume ? input.resume.original_input : input.input;
  return {
    id: 'trigger',
    name: 'Trigger',
    kind: 'trigger',
    status: 'success',
    started_at: at.toISOString(),
    finished_at: at.toISOString(),
    duration_ms: 0,
    attempts: 1,
    input: input.trigger.body !== undefined ? input.trigger.body : validated,
    output: validated,
    error: null,
    ...(input.trigger.event && { event: { id: input.trigger.event.id, name: input.trigger.event.name } }),
    // A debounced run: how many triggers it took in (it ran with the last one's input).
    ...(coalesced !== undefined && { coalesced }),
  };
}
