/**
 * What the API hands to the execution workflow, and what steps exchange with their activities.
 * Types only: both the API and the deterministic workflow code import this module.
 */
import type { ContainerStep, Definition, LeafStep, TriggerType, WorkflowStep } from './definitions/schema';
import type { ExecutionError } from './error-detail';
import type { EventKind } from './event-types';
import type { AdmissionResult, WorkspacePlaceResult } from './flow-control';

/** Workflow type name of executions in Temporal. */
export const EXECUTION_WORKFLOW_TYPE = 'execution';
/** The housekeeping job's workflow (workers/workflows/housekeeping.ts). */
export const HOUSEKEEPING_WORKFLOW_TYPE = 'housekeeping';

export interface ExecutionInput {
  workspaceId: string;
  /** The definition snapshot: edits to the workflow never change a run in flight, and a retry re-runs it. */
  workflow: { id: string; version: number; definition: Definition };
  trigger: {
    /** `workflow`: a child execution, started by a workflow step of its parent. */
    type: TriggerType | 'workflow';
    /** The request body as received, only when it differs from `input` (schema defaults filled in). */
    body?: unknown;
    /** An event trigger's run: the event it started for (docs/events.md#event-triggers). */
    event?: TriggerEvent;
  };
  /** The validated input (for a retry with a corrected input: the corrected one). */
  input: unknown;
  /**
   * Whether the workspace subscribed to `execution.started` when the run was triggered; unknown (a
   * scheduled run) when absent, and then the run's emitter looks it up.
   */
  emit_started?: boolean;
  /** Set on a retry: the run goes on from the failed step of an earlier run. */
  resume?: ResumePoint;
  /** Set on a child execution: the execution and step that started it, and how deep it is (1: a child). */
  parent?: ParentLink;
  /** Set on a rerun (a bulk operation's `rerun`): the execution whose input it runs again. */
  rerun_of?: string;
  /**
   * Set when the trigger debounced (docs/flow-control.md#debounce): the run waits for its key's quiet time,
   * then runs with the last coalesced trigger's input (`end_debounce`), not `input`, which is the first's.
   */
  debounce?: true;
  /**
   * Set when the run takes a place under its workspace's cap on open executions (workers/workflows/
   * workspace-cap.ts): the trigger saw a cap, and a schedule's runs always ask. Absent: no place, as for runs
   * recorded before the cap existed, so their histories replay as they were.
   */
  workspace_cap?: true;
  /**
   * Set on runs of a definition with `concurrency` or `throttle` triggered since its gates are asked by the
   * run's first batch of steps (workers/workflows/admission.ts). Absent: each gate is a local activity of its
   * own, as runs recorded before asked, so their histories replay as they were.
   */
  gates_in_batch?: true;
}

/** The event that started an execution of an event trigger. */
export interface TriggerEvent {
  id: string;
  name: string;
}

/** A child execution's parent (docs/definitions.md#composition). */
export interface ParentLink {
  execution_id: string;
  step: string;
  depth: number;
  /** Where the workflow step is in its parent: the containers around it (RunPath); absent at the top level. */
  path?: RunPath;
}

/** Children nest at most this deep (`child_depth_exceeded`). */
export const MAX_CHILD_DEPTH = 10;

/** Input of the `prepare_child` local activity: a workflow step about to start its child execution. */
export interface ChildRequest {
  workspace_id: string;
  step: {
    id: string;
    workflow: string;
    version?: number | undefined;
    input?: Record<string, unknown> | undefined;
  };
  context: ExpressionContext;
  parent: ParentLink;
}

/** What `prepare_child` found: the child's input, or why the step fails. */
export type ChildPreparation =
  { child: ExecutionInput; at: string } | { error: { code: string; message: string }; at: string };

/**
 * Where a nested step runs: the containers around it, outermost first, each followed by the run key
 * (a parallel branch id, a map item index, a switch case id, a loop iteration): `["enrich", "crm"]`,
 * `["notify_all", "3", "inner", "0"]`. Absent (or empty) at the top level.
 */
export type RunPath = string[];

/** The run keys of a run path ("3", "crm/0"; '' at the top level): what an approval's `run` and event_wakes.run name. */
export function runKeyOf(path: RunPath): string {
  return path.filter((_, i) => i % 2 === 1).join('/');
}

/**
 * Where a retry run starts (docs/api.md#retry-from-the-failed-step): the failed run's steps before the failed
 * one, as they were recorded (not run again), and the step to start from.
 */
export interface ResumePoint {
  from_step: string;
  /** The records of the steps before `from_step` (success or skipped), carried over as they were. */
  records: StepRecord[];
  /** The run this one retries. */
  retry_of: string;
  /** The input the trigger gave, when the retry corrected it (the trigger step still shows this one). */
  original_input?: unknown;
  /** `from_step` is a parallel or map step that failed inside: what its runs left that the retry keeps. */
  kept?: KeptRuns;
}

/**
 * The runs of a failed parallel or map step that a retry keeps instead of running them again
 * (docs/api.md#retry-from-the-failed-step): the branches and items that succeeded. Only the runs of the
 * top-level step the retry starts from; a run that runs again runs whole.
 */
export interface KeptRuns {
  /** The container (ResumePoint.from_step). */
  step: string;
  /** Branches or items (of a map run in its own history) that succeeded, by run key. */
  runs: KeptRun[];
  /**
   * A large map (run in chunks): the run id of each chunk that completed in the failed run, by the index of
   * its first item. The retry's chunk reads its previous run's result and runs again only the items that
   * did not succeed there.
   */
  chunks?: Record<string, string>;
}

export interface KeptRun {
  key: string;
  /** The run's output (its last step's that ran). */
  output: unknown;
  /** A map item's value: the item is kept only while the retry's items give it unchanged at its index. */
  item?: unknown;
  /** The run as reads showed it (src/executions/views.ts RunView); reads of the retry show it as it was. */
  view: unknown;
}

/** What the execution shows for one step; `input` and `output` as docs/api.md#executions describes them. */
export interface StepRecord {
  id: string;
  /** canceled: only a wait_for_event's end (end_event_wait), when its run or its container stopped it. */
  status: 'success' | 'skipped' | 'failed' | 'waiting' | 'running' | 'canceled';
  started_at: string | null;
  finished_at: string | null;
  attempts: number;
  /** The resolved configuration; for a rules step, left out (the reader derives it from the context). */
  input?: unknown;
  output: unknown;
  error: { code: string; message: string } | null;
  /** A rules step whose matching rule said `stop`. */
  stop?: boolean;
  /** A connector or ai step whose first attempt failed: when the next one is due. */
  next_attempt_at?: string;
  /** A nested step: the containers around it (RunPath). */
  path?: RunPath;
  /** A waiting step other than an approval: what it waits for (a sleep: its timer). */
  waiting_for?: WaitingFor;
}

/**
 * What a waiting step waits for (docs/api.md#executions): a sleep's timer and when it fires, or the event a
 * wait_for_event waits for and until when.
 */
export type WaitingFor =
  | {
      type: 'timer';
      /** RFC 3339, UTC. */
      until: string;
    }
  | {
      type: 'event';
      /** The event's name. */
      event: string;
      /** When the wait times out: RFC 3339, UTC. */
      until: string;
    };

/** A wait_for_event step's input as recorded: what it waits for. */
export interface EventWaitSpec {
  event: string;
  match: string | null;
  timeout: string;
  on_timeout: 'fail' | 'continue';
}

/** The event that woke a wait_for_event step: its output (docs/events.md#waiting-for-an-event). */
export interface WokenByEvent {
  id: string;
  name: string;
  data: Record<string, unknown> | null;
  /** RFC 3339, UTC. */
  received_at: string;
}

/** Signal that tells a run an event woke one of its waits (src/events/wake.ts → workers/workflows/event-wait.ts). */
export const EVENT_WOKE_SIGNAL = 'event_woke';

/** What the EVENT_WOKE_SIGNAL carries: the waiting step's key (its run path and id) and the event's id. */
export interface EventWokeSignal {
  key: string;
  event_id: string;
}

/** How a wait_for_event's wait ended, as the workflow saw it; `end_event_wait` gives the step's record. */
export interface EndEventWaitRequest {
  /** The waiting step's record, as `run_steps` gave it. */
  record: StepRecord;
  /** The step's key (its run path and id). */
  key: string;
  /** woke: a signal came; timed_out: the timeout passed; canceled: the run or its container stopped it. */
  ended: 'woke' | 'timed_out' | 'canceled';
  on_timeout: 'fail' | 'continue';
}

/** A sleep step's input as recorded: its `duration`, or its `until` after templates. */
export type SleepRequestSpec = { duration: string } | { until: unknown };

/** A sleep step's output once it woke: the time it slept until (RFC 3339, UTC). */
export interface SleepOutput {
  slept_until: string;
}

/** Input of the `run_steps` local activity: a batch of consecutive steps and the data they read. */
export interface StepBatch {
  workspace_id: string;
  execution: ExpressionContext['execution'];
  steps: LeafStep[];
  /** The part of the context the batch's expressions can read (input, execution, earlier outputs). */
  context: ExpressionContext;
  /** Asks for the workspace's subscribed event kinds (when the run may close or wait after this batch). */
  report_subscriptions: boolean;
  /** Nested steps: the containers around them, stamped on every record. */
  path?: RunPath;
  /**
   * The run's flow control gates (workers/workflows/admission.ts), folded into its top-level batches so
   * that a run admitted at once pays no local activity of its own for them.
   */
  admission?: BatchAdmission;
}

/**
 * What a top-level batch does for its run's gates: `acquire` asks the gates not passed yet before any step
 * (the definition's `concurrency`, then its `throttle`, then the workspace's cap; the batch stops at the
 * first that queues or fails); `release` gives back what the run holds (the key gates' rows, its workspace
 * place) when the batch ends the run: a failure, a stop, or every step through the end when `reaches_end`.
 */
export interface BatchAdmission {
  acquire?: {
    concurrency?: { workflow_id: string; limit: number; key?: string };
    throttle?: { workflow_id: string; limit: number; period_ms: number; key?: string };
    workspace?: true;
    /** The definition's priority expression (over the batch's `context.input`). */
    priority?: string;
  };
  release: { keys: boolean; workspace: boolean };
  reaches_end: boolean;
}

/**
 * The gates' answers, in the order asked, up to the first that is not `open` (or `unlimited`): `queued`
 * (no step ran: the run waits for the gate's signal, then runs the batch again) or an evaluation error (no
 * step ran; it fails the run).
 */
export interface BatchAdmissionAnswer {
  concurrency?: AdmissionResult;
  throttle?: AdmissionResult;
  workspace?: WorkspacePlaceResult;
}

/**
 * What `run_steps` did: one record per step it reached, in order, and what the workflow does next.
 * Steps of a batch after a failure, a stop, an approval or a retry are not reached.
 */
export interface StepBatchResult {
  records: StepRecord[];
  next: BatchNext;
  /** The workspace's subscribed event kinds, when asked. */
  subscribed?: EventKind[];
  /** Size of `records` as JSON (UTF-8 bytes). */
  bytes: number;
  /**
   * Set by a worker that encrypts payloads (PAYLOAD_ENCRYPTION_KEYS): a failure message is not a payload,
   * so the run's own failure then names only the step and the code, and its message stays in the
   * (encrypted) details (docs/operations.md#what-stays-in-clear).
   */
  encrypted?: true;
  /** The answers to `admission.acquire`. */
  admission?: BatchAdmissionAnswer;
  /** The batch ended the run and gave back what it held (`admission.release`). */
  released?: true;
}

export type BatchNext =
  /** Every step reached went through; `records.length` steps of the batch are done. */
  | { kind: 'continue' }
  /** A rules `stop`: the execution succeeds, later steps are skipped. */
  | { kind: 'stop' }
  /** The last record failed and fails the execution. */
  | { kind: 'fail'; error: ExecutionError }
  /** The last record (a connector or ai step) failed its first attempt and retries as an activity. */
  | { kind: 'retry'; request: HttpRequestSpec | AiRequestSpec; meta: StepMeta; delay_ms: number }
  /**
   * The last record (a connector or ai step) was not attempted: its workspace held its share of the
   * worker's local calls (workers/activities/step-slots.ts). Every attempt runs as an activity, at once.
   */
  | { kind: 'defer'; request: HttpRequestSpec | AiRequestSpec; meta: StepMeta }
  /** The last record is an approval step, now waiting for a decision. */
  | { kind: 'approval'; timeout: string | null }
  /**
   * The last record is a sleep step, now waiting until `until` (RFC 3339, UTC), which was `delay_ms` ahead
   * when the activity ended: the workflow's own clock stands still for the whole workflow task, so it
   * cannot tell how far `until` is.
   */
  | { kind: 'sleep'; until: string; delay_ms: number }
  /**
   * The last record is a wait_for_event step, filed among the event's waiters and now waiting until `until`
   * (`delay_ms` ahead, as for a sleep) for an event to wake it.
   */
  | { kind: 'event'; until: string; delay_ms: number; on_timeout: 'fail' | 'continue' };

export interface ExecutionResult {
  status: 'success';
  /** The rules step whose `stop` action ended the run early, if any. */
  stopped_at?: string;
  /** The definition's `output`, or the output of the last step that ran (docs/definitions.md#composition). */
  output?: unknown;
}

/**
 * Input of the `evaluate_control` local activity: the expressions a container (or the definition's
 * `output`) needs, evaluated where steps are, never in workflow code.
 */
export interface ControlRequest {
  workspace_id: string;
  /** What to evaluate: entering a container (its `if`, a map's items, a switch's case), a loop's `until`, the execution's output. */
  purpose: 'enter' | 'until' | 'output';
  /** The container without its step lists (they are not needed here, and would only weigh on history). */
  step?: ControlStep;
  /** The definition's `output` template (purpose `output`). */
  output?: unknown;
  context: ExpressionContext;
  path?: RunPath;
}

/** Which evaluation a ControlResult answers: its purpose, the container's id, the container's run path. */
export interface ControlSubject {
  purpose: ControlRequest['purpose'];
  step?: string;
  path?: RunPath;
}

/** A container's control fields: everything but the step lists. */
export type ControlStep =
  | (Omit<Extract<ContainerStep, { kind: 'parallel' }>, 'branches'> & { branches: { id: string }[] })
  | (Omit<Extract<ContainerStep, { kind: 'map' }>, 'steps'> & { holds_approval?: boolean })
  | (Omit<Extract<ContainerStep, { kind: 'switch' }>, 'cases' | 'default'> & {
      cases: { id: string; when: string }[];
      has_default: boolean;
    })
  | Omit<Extract<ContainerStep, { kind: 'loop' }>, 'steps'>
  | Omit<WorkflowStep, 'input'>;

/** What `evaluate_control` found. */
export interface ControlResult {
  /** When the evaluation began (the container's start). */
  at: string;
  /**
   * What was evaluated, echoed from the request: a local activity's marker in history keeps its result only,
   * and reads (src/executions/container-views.ts) need to know which container, in which run, it is about.
   * Absent in results recorded before it existed.
   */
  of?: ControlSubject;
  /** The container's `if` did not hold: it is skipped. */
  skip?: true;
  /** An expression failed, or a map's items are not an array or too many: the container fails with it. */
  error?: { code: string; message: string };
  /** A map's items. */
  items?: unknown[];
  /** The switch case that holds: its id, "default", or null (none, and no default). */
  case?: string | null;
  /** A loop's `until` held. */
  done?: boolean;
  /** The execution's output (purpose `output`). */
  output?: unknown;
}

/** Evaluation context of expressions and templates (docs/definitions.md#expressions-and-templates). */
export interface ExpressionContext {
  input: unknown;
  steps: Record<string, { output: unknown; status: string }>;
  execution: { id: string; workflow: string; version: number };
  /** Names containers add: a map's item (`as`, default `item`) and `index`, a loop's `iteration`. */
  [name: string]: unknown;
}

export interface RuleSpec {
  when: string;
  output?: unknown;
  action?: 'continue' | 'fail' | 'stop';
  message?: string;
}

/** A connector request after templates were resolved (secrets templates stay as written until the activity). */
export interface HttpRequestSpec {
  method: string;
  url: string;
  headers?: Record<string, string>;
  query?: Record<string, string | number | boolean>;
  body?: unknown;
  follow_redirects?: boolean;
}

export interface HttpResponseOutput {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/**
 * What a step activity receives besides its input. Kept out of the first argument so that the step's
 * recorded input (history, API) is exactly its resolved configuration.
 */
export interface StepMeta {
  workspaceId: string;
  /** JSON pointers of the strings in the input that hold `{{ secrets.NAME }}` templates. */
  secretPointers: string[];
}

/** The `ai` step's request, after templates (secrets templates stay as written until the activity). */
export interface AiRequestSpec {
  model: string | null;
  system: string | null;
  prompt: string;
  temperature: number | null;
  max_tokens: number | null;
  output_schema: Record<string, unknown> | null;
}

export interface AiOutput {
  text?: string;
  json?: unknown;
  model: string;
  usage: Record<string, number> | null;
}

/** What an approval step records as its input when it starts waiting. */
export interface ApprovalRequestSpec {
  message: unknown;
  /** The step's `timeout` (how long the decision may take), or null for no limit. */
  timeout: string | null;
}

/** Update `decide`: what the API sends when someone approves or rejects. */
/** The `decide` Update's refusal when the step waits in several runs and the request names none. */
export const RUN_REQUIRED = 'run_required';

export interface ApprovalDecisionRequest {
  step: string;
  decision: 'approve' | 'reject';
  comment: string | null;
  /** The id of the API key that decided. */
  decided_by: string;
  /**
   * Epoch ms after which the workflow refuses this decision (DECISION_TOO_LATE): the API answers the
   * request by then, so a decision it reported as not applied never applies later (src/executions/decide.ts).
   * Absent in decisions sent before it existed.
   */
  apply_by?: number;
  /**
   * Which run of the step, when it waits inside a container: the run keys of its containers joined by "/"
   * ("3", "crm/0"). May be left out when one run of the step waits.
   */
  run?: string;
}

/** The approval step's output once decided. */
export interface ApprovalDecision {
  decision: 'approved' | 'rejected';
  decided_by: string;
  comment: string | null;
  decided_at: string;
}

export const DECIDE_UPDATE = 'decide';

/** ApplicationFailure type of a `decide` Update that reached the workflow after its `apply_by`. */
export const DECISION_TOO_LATE = 'decision_too_late';

/** ApplicationFailure types (the `code` of step and execution errors) that the API shows as they are. */
export const STEP_ERROR_CODES = {
  ruleFailed: 'rule_failed',
  expression: 'expression_error',
  httpStatus: 'http_error',
  network: 'network_error',
  timeout: 'step_timed_out',
  destination: 'destination_not_allowed',
  responseTooLarge: 'response_too_large',
  invalidRequest: 'invalid_step_request',
  aiNotConfigured: 'ai_not_configured',
  aiProvider: 'ai_provider_error',
  aiInvalidOutput: 'ai_invalid_output',
  aiBudgetExceeded: 'ai_budget_exceeded',
  approvalRejected: 'approval_rejected',
  approvalTimedOut: 'approval_timed_out',
  stepNotWaiting: 'step_not_waiting',
  secretNotFound: 'secret_not_found',
  canceled: 'canceled',
  stepFailed: 'step_failed',
  historyTooLarge: 'history_too_large',
  invalidItems: 'invalid_items',
  mapTooLarge: 'map_too_large',
  loopLimitExceeded: 'loop_limit_exceeded',
  branchFailed: 'branch_failed',
  itemsFailed: 'items_failed',
  workflowNotFound: 'workflow_not_found',
  invalidInput: 'invalid_input',
  childFailed: 'child_failed',
  childDepthExceeded: 'child_depth_exceeded',
  invalidTime: 'invalid_time',
  sleepTooLong: 'sleep_too_long',
  eventTimedOut: 'event_timed_out',
} as const;

/** Workflow type of a large map's chunks (workers/workflows/map-chunk.ts). */
export const MAP_CHUNK_WORKFLOW_TYPE = 'map_chunk';

/**
 * Items a map runs in the execution's own history; a larger map runs in chunks of this many items, each a
 * child workflow (workers/workflows/containers/map.ts). A map whose steps hold an approval runs at most this
 * many: a decision reaches the execution, not its chunks.
 */
export const MAP_INLINE_ITEMS = 100;

export interface MapChunkInput {
  workspaceId: string;
  workflow: { id: string; version: number };
  /** The execution's input and identity, as every expression sees them. */
  context: Pick<ExpressionContext, 'input' | 'execution'>;
  /** The map step's frame: where it is, what its steps can read. */
  frame: { path: RunPath; scope: Record<string, unknown>; steps: ExpressionContext['steps'] };
  stepId: string;
  steps: Definition['steps'];
  /** The name of the item in the context (`as`). */
  as: string;
  /** The items of this chunk, and the index of the first one in the map. */
  items: unknown[];
  first: number;
  /** Failures past which the chunk stops (the map's tolerated failures). */
  allowed: number;
  depth: number;
  /** A retry: the run of this chunk in the failed run, whose succeeded items the chunk keeps (KeptRuns). */
  previous_run_id?: string;
}

export interface MapChunkResult {
  /** Each item's last step output, in order (null for a failed or unstarted item). */
  outputs: unknown[];
  /** The items that failed, with the error (its path names the item). */
  failures: { index: number; error: ExecutionError }[];
  /** Items that ran (the chunk stops early past its allowed failures, or at a `stop` rule). */
  ran: number;
  /** A rules step said `stop`: the whole execution ends with success. */
  stopped?: string;
}
