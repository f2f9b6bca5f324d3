/**
 * wait_for_event steps (docs/events.md#waiting-for-an-event), on the worker's side. `run_steps` begins a wait
 * (beginEventWait): it files the step among the waiters of its event name, under the key of its `match`
 * (core/expressions/match-key.ts) evaluated over the step's context, and looks at the events of that name
 * that arrived while it was filing (their dispatch may have missed the new row). The API's dispatcher
 * (src/events/wake.ts) wakes the rest. `end_event_wait` ends a wait as the run stops waiting, and says what
 * the step came to: the event that claimed it, or a timeout, or a cancel.
 *
 * A wait begins once: a second run of `run_steps` for the same step (its worker died before the result was
 * recorded) finds its row, with the event that may have woken it since.
 */
import { Context } from '@temporalio/activity';
import type { WaitForEventStep } from '../../core/definitions/schema';
import { DEFAULT_EVENT_WAIT_TIMEOUT } from '../../core/definitions/schema';
import { ExpressionError } from '../../core/expressions/errors';
import { isTruthy } from '../../core/expressions/evaluate';
import { keyValueOf, matchKeyOf } from '../../core/expressions/match-key';
import { findReferences } from '../../core/expressions/references';
import {
  STEP_ERROR_CODES,
  type EndEventWaitRequest,
  type EventWaitSpec,
  type ExpressionContext,
  runKeyOf,
  type RunPath,
  type StepRecord,
  type WokenByEvent,
} from '../../core/execution-types';
import { durationMs } from '../../core/step-defaults';
import type { SecretCipher } from '../../platform/secrets/cipher';
import type { Database } from '../../platform/store/db';
import {
  claimWaiter,
  endWaiter,
  eventsSince,
  fileWaiter,
  sealContext,
  type WaiterId,
  type WakingEvent,
} from '../../platform/store/event-waiters';

/** Events a new wait looks at that arrived while it was being filed: a moment's worth, at most this many. */
const CATCH_UP_EVENTS = 100;

/** Evaluates one expression of the step over a context (its budget and limits: steps.ts). */
export type StepEvaluate = (expression: string, context: ExpressionContext) => Promise<unknown>;

/** A wait as `run_steps` began it: waiting until `until`, or woken already. */
export type BegunWait =
  | { waiting: true; input: EventWaitSpec; until: Date }
  | { waiting: false; input: EventWaitSpec; event: WokenByEvent };

export interface EventWaitDeps {
  db: Database;
  /** Seals what a wait keeps of its step's context (platform/store/event-waiters.ts). */
  cipher: SecretCipher;
}

/** The event as a woken step's output and `match` show it. */
export function eventView(event: WakingEvent): WokenByEvent {
  return {
    id: event.id,
    name: event.name,
    data: event.data,
    received_at: new Date(event.received_at).toISOString(),
  };
}

/** `$` or `$$` alone (the whole context), as opposed to a function (`$count`) or a variable (`$x`). */
const WHOLE_CONTEXT = /\$(?![A-Za-z0-9_])/;

/**
 * What a wait keeps of its step's context for its `match`: the names the match reads (`input`, `order`),
 * of `steps` only the steps it names. All of it when the match may read the context as a whole.
 */
export function matchContext(match: string | null, context: ExpressionContext): Record<string, unknown> {
  if (match === null) return {};
  const whole = context as unknown as Record<string, unknown>;
  const refs = findReferences(match);
  if (WHOLE_CONTEXT.test(match) || refs.allSteps) return whole;
  const kept: Record<string, unknown> = {};
  for (const root of refs.roots) if (root !== 'event' && Object.hasOwn(whole, root)) kept[root] = whole[root];
  if (refs.roots.has('steps')) {
    const steps: Record<string, unknown> = {};
    for (const id of refs.steps) if (Object.hasOwn(context.steps, id)) steps[id] = context.steps[id];
    kept['steps'] = steps;
  }
  return kept;
}

export function createEventWaits(deps: EventWaitDeps) {
  /** The Temporal run this activity works for, and the step's key in it. */
  function waiterId(key: string): WaiterId {
    const execution = Context.current().info.workflowExecution;
    if (!execution) throw new Error('A wait_for_event step runs in a workflow');
    const { workflowId, runId } = execution;
    return { workflow_id: workflowId, run_id: runId, step_key: key };
  }

  /** Files the wait; an event that woke it already (meanwhile, or before a retry of run_steps) ends it. */
  async function beginEventWait(
    step: WaitForEventStep,
    context: ExpressionContext,
    where: { workspaceId: string; executionId: string; path: RunPath },
    evaluate: StepEvaluate,
    started: Date,
  ): Promise<BegunWait> {
    const input: EventWaitSpec = {
      event: step.event,
      match: step.match ?? null,
      timeout: step.timeout ?? DEFAULT_EVENT_WAIT_TIMEOUT,
      on_timeout: step.on_timeout ?? 'fail',
    };
    const until = new Date(started.getTime() + durationMs(input.timeout));
    const key = input.match === null ? undefined : matchKeyOf(input.match);
    let keyPath = '';
    let keyValue: string | null = null;
    if (key) {
      const value = await evaluate(key.valueExpression, context);
      const json = value === undefined ? null : keyValueOf(value);
      // An object or an array: no key holds it, the waiter is tried on every event of its name.
      if (value === undefined || json !== undefined) [keyPath, keyValue] = [key.eventPath, json ?? null];
    }
    const id = waiterId([...where.path, step.id].join('/'));
    const filedWaiter = {
      ...id,
      workspace_id: where.workspaceId,
      execution_id: where.executionId,
      step_id: step.id,
      run: runKeyOf(where.path),
      match: input.match,
      context: sealContext(deps.cipher, id, matchContext(input.match, context)),
    };
    const filed = await fileWaiter(deps.db, {
      ...filedWaiter,
      event_name: step.event,
      key_path: keyPath,
      key_value: keyValue,
      until,
    });
    let woken = filed.woken_by !== null;
    if (!woken) {
      const since = await eventsSince(
        deps.db,
        where.workspaceId,
        step.event,
        filed.began_at,
        CATCH_UP_EVENTS,
      );
      for (const event of since) {
        if (!(await matches(input.match, context, event, evaluate))) continue;
        // Claimed here, or by the dispatcher in the meantime: either way an event woke the wait.
        await claimWaiter(deps.db, { ...filedWaiter, woken_by: null }, event.id);
        woken = true;
        break;
      }
    }
    const event = woken ? await endWaiter(deps.db, id) : undefined;
    return event ? { waiting: false, input, event: eventView(event) } : { waiting: true, input, until };
  }

  /** Ends a wait as its run stops waiting: the step's record, complete. */
  async function end_event_wait(request: EndEventWaitRequest): Promise<StepRecord> {
    const event = await endWaiter(deps.db, waiterId(request.key));
    const { record } = request;
    const finished_at = new Date().toISOString();
    const base: StepRecord = { ...record, finished_at, waiting_for: undefined };
    delete base.waiting_for;
    if (request.ended === 'canceled') return { ...base, status: 'canceled' };
    if (event) return { ...base, status: 'success', output: eventView(event) };
    if (request.on_timeout === 'continue') return { ...base, status: 'success', output: null };
    const input = record.input as EventWaitSpec;
    return {
      ...base,
      status: 'failed',
      error: {
        code: STEP_ERROR_CODES.eventTimedOut,
        message: `No event "${input.event}" ${input.match ? "matching the step's match " : ''}arrived within ${input.timeout}.`,
      },
    };
  }

  return { beginEventWait, end_event_wait };
}

/**
 * Whether `match` holds over the step's context plus the event (no match: every event of the name). A match
 * that fails over an event does not hold, as when the dispatcher tries it (src/events/wake.ts): the wait goes
 * on. Thrown, it would fail the step with expression_error and leave its filed wait for the dispatcher to
 * claim for a run that no longer waits.
 */
export async function matches(
  match: string | null,
  context: ExpressionContext,
  event: WakingEvent,
  evaluate: StepEvaluate,
): Promise<boolean> {
  if (match === null) return true;
  try {
    return isTruthy(await evaluate(match, { ...context, event: eventView(event) }));
  } catch (error) {
    if (error instanceof ExpressionError) return false;
    throw error;
  }
}
