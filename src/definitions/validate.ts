/**
 * Validates a workflow definition: the zod schema first, then what a schema cannot say (step ids unique
 * across nested steps too, nesting at most MAX_NESTING levels, expressions that parse, references only to
 * steps an expression can see (src/definitions/nested.ts), secrets only where they are resolved, an
 * input_schema that compiles). Every problem is reported at once, with a JSON pointer.
 */
import type { z } from 'zod';
import { AppError, type ErrorDetail } from '../../platform/errors';
import { ExpressionError } from '../../core/expressions/errors';
import { findReferences, readsSecrets } from '../../core/expressions/references';
import { itemsExpression, stringsWithPointers, templateExpressions } from '../../core/expressions/templates';
import type { SchemaValidation } from '../../platform/compute/schemas';
import {
  definitionSchema,
  MAX_DEFINITION_STEPS,
  MAX_NESTING,
  RESERVED_CONTEXT_NAMES,
  type Definition,
  type Step,
} from '../../core/definitions/schema';
import { isLeafStep } from '../../core/definitions/step-kinds';
import { parseUserJson } from '../../core/parse-user-json';
import { parseRfc3339 } from '../../core/time';
import { durationMs } from '../../core/step-defaults';
import { MIN_DEBOUNCE_MS, MIN_THROTTLE_PERIOD_MS } from '../../core/flow-control';
import {
  describeStepCount,
  OUTPUT_PLACE,
  placeSteps,
  unreadableStep,
  untilPlace,
  type PlacedStep,
  type Trail,
} from './nested';

/** Step kinds whose templates may read `secrets` (resolved inside their activity). */
const SECRET_KINDS = new Set<Step['kind']>(['connector', 'ai']);

/**
 * Parses and checks a definition of `workspaceId` (its JSON Schemas compile in that workspace's name: see
 * platform/compute/schemas.ts); throws AppError 400 `invalid_definition` listing every problem.
 */
export async function parseDefinition(
  body: unknown,
  schemas: SchemaValidation,
  workspaceId: string,
): Promise<Definition> {
  const parsed = parseUserJson(definitionSchema, body);
  if (!parsed.success) throw invalidDefinition(zodDetails(parsed.issues));
  const definition = parsed.data;
  const placed = placeSteps(definition);
  // Before the checks, whose cost grows with the steps: nested lists can hold many more than the top one.
  if (placed.length > MAX_DEFINITION_STEPS)
    throw invalidDefinition([
      {
        path: '/steps',
        message: `has ${describeStepCount(placed)}; a definition holds at most ${MAX_DEFINITION_STEPS}, nested steps included`,
      },
    ]);
  const problems = [
    ...checkDefinition(definition, placed),
    ...(await schemaProblems(definition, placed, schemas, workspaceId)),
  ];
  if (problems.length > 0) throw invalidDefinition(problems);
  return definition;
}

/**
 * The definition's JSON Schemas: each compiles (off the event loop), and a schedule's input satisfies
 * the input_schema.
 */
async function schemaProblems(
  definition: Definition,
  placed: PlacedStep[],
  schemas: SchemaValidation,
  workspaceId: string,
): Promise<ErrorDetail[]> {
  const problems: ErrorDetail[] = [];
  for (const { step, pointer } of placed) {
    if (step.kind !== 'ai' || !step.output_schema) continue;
    const problem = await schemas.check(workspaceId, step.output_schema);
    if (problem)
      problems.push({
        path: `${pointer}/output_schema`,
        message: `is not a valid JSON Schema: ${problem}`,
      });
  }
  if (!definition.input_schema) return problems;
  const problem = await schemas.check(workspaceId, definition.input_schema);
  if (problem) {
    problems.push({ path: '/input_schema', message: `is not a valid JSON Schema: ${problem}` });
    return problems;
  }
  if (definition.trigger?.type === 'schedule') {
    // A copy: validation fills in defaults, and the definition is stored as written.
    const input = structuredClone(definition.trigger.input ?? {});
    const checked = await schemas.validate(workspaceId, definition.input_schema, input);
    for (const problem of checked.problems)
      problems.push({
        path: `/trigger/input${problem.path}`,
        message: `${problem.message} (the schedule's input must satisfy the input_schema)`,
      });
  }
  return problems;
}

export function invalidDefinition(details: ErrorDetail[]): AppError {
  const first = details[0];
  const summary = first ? `${first.path || '/'}: ${first.message}` : 'invalid';
  const more =
    details.length > 1 ? ` (and ${details.length - 1} more problem${details.length > 2 ? 's' : ''})` : '';
  return new AppError(400, 'invalid_definition', `The workflow definition is invalid: ${summary}${more}.`, {
    details,
  });
}

/** zod issues as contract details: JSON pointer paths, one entry per problem. */
export function zodDetails(issues: readonly z.core.$ZodIssue[]): ErrorDetail[] {
  return issues.map((issue) => ({ path: toPointer(issue.path), message: describeIssue(issue) }));
}

function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys')
    return `unknown field${issue.keys.length > 1 ? 's' : ''}: ${issue.keys.join(', ')}`;
  return issue.message;
}

export function toPointer(path: readonly PropertyKey[]): string {
  return path.map((part) => `/${String(part).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

function checkDefinition(definition: Definition, placed: PlacedStep[]): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const byId = new Map<string, PlacedStep>();
  for (const place of placed) {
    const { step, pointer } = place;
    const first = byId.get(step.id);
    if (step.id === 'trigger')
      problems.push({ path: `${pointer}/id`, message: '"trigger" is reserved for the trigger step' });
    else if (first)
      problems.push({
        path: `${pointer}/id`,
        message: `duplicate step id "${step.id}" (also at ${first.pointer})`,
      });
    else byId.set(step.id, place);
  }
  for (const place of placed) checkStep(problems, place, byId);
  if (definition.output !== undefined)
    checkTemplates(problems, '/output', definition.output, { at: OUTPUT_PLACE, steps: byId, secrets: false });
  if (definition.trigger?.type === 'schedule') problems.push(...scheduleProblems(definition));
  if (definition.trigger?.type === 'event' && definition.trigger.if !== undefined)
    problems.push(...eventConditionProblems(definition.trigger.if));
  if (definition.concurrency?.key !== undefined)
    problems.push(...inputExpressionProblems('/concurrency/key', definition.concurrency.key));
  if (definition.throttle) {
    if (durationMs(definition.throttle.period) < MIN_THROTTLE_PERIOD_MS)
      problems.push({ path: '/throttle/period', message: 'must be at least 1s' });
    if (definition.throttle.key !== undefined)
      problems.push(...inputExpressionProblems('/throttle/key', definition.throttle.key));
  }
  if (definition.debounce) problems.push(...debounceProblems(definition.debounce));
  if (definition.priority !== undefined)
    problems.push(...inputExpressionProblems('/priority', definition.priority));
  return problems;
}

/** A debounce waits at least a second, and its `max_wait` (when given) is no shorter than its `period`. */
function debounceProblems(debounce: NonNullable<Definition['debounce']>): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const period = durationMs(debounce.period);
  if (period < MIN_DEBOUNCE_MS) problems.push({ path: '/debounce/period', message: 'must be at least 1s' });
  if (debounce.max_wait !== undefined && durationMs(debounce.max_wait) < period)
    problems.push({
      path: '/debounce/max_wait',
      message: `must be at least the period (${debounce.period})`,
    });
  if (debounce.key !== undefined) problems.push(...inputExpressionProblems('/debounce/key', debounce.key));
  return problems;
}

/** Context names a flow control expression cannot read: it is evaluated before any step, over {input}. */
const NOT_BEFORE_STEPS = ['steps', 'secrets', 'execution'];

/** A flow control expression (docs/flow-control.md) must parse and read only `input`. */
function inputExpressionProblems(path: string, expression: string): ErrorDetail[] {
  let roots: Set<string>;
  try {
    roots = findReferences(expression).roots;
  } catch (error) {
    const message = error instanceof ExpressionError ? error.message : String(error);
    return [{ path, message: `expression does not parse: ${message}` }];
  }
  const read = NOT_BEFORE_STEPS.filter((name) => roots.has(name));
  return read.length === 0
    ? []
    : [
        {
          path,
          message: `expression reads ${read.join(', ')}; it is evaluated before any step and sees only input`,
        },
      ];
}

/**
 * An event trigger's `if` must parse (its regular expressions on RE2 too); it sees the event, not steps
 * or secrets, so what it reads is not checked further.
 */
function eventConditionProblems(expression: string): ErrorDetail[] {
  try {
    findReferences(expression);
    return [];
  } catch (error) {
    const message = error instanceof ExpressionError ? error.message : String(error);
    return [{ path: '/trigger/if', message: `expression does not parse: ${message}` }];
  }
}

/** Where an expression is evaluated: what it may read of the steps, and whether it may read secrets. */
interface Scope {
  at: Trail;
  steps: ReadonlyMap<string, PlacedStep>;
  secrets: boolean;
}

/** One step, wherever it is: its nesting, its expressions and templates, a container's own fields. */
function checkStep(problems: ErrorDetail[], place: PlacedStep, steps: ReadonlyMap<string, PlacedStep>): void {
  const { step, pointer: at } = place;
  // Reported at the first level too deep only: the steps it holds are too deep because it is.
  if (place.trail.length === MAX_NESTING + 1)
    problems.push({
      path: at,
      message: `is nested ${place.trail.length} levels deep; steps nest at most ${MAX_NESTING} levels (top-level steps are level 1, so a step list sits inside at most ${MAX_NESTING - 1} containers)`,
    });
  const scope: Scope = { at: place.trail, steps, secrets: false };
  for (const [path, expression] of expressionsOf(step))
    checkExpression(problems, `${at}${path}`, expression, scope);
  checkTemplates(problems, at, stepConfiguration(step), { ...scope, secrets: SECRET_KINDS.has(step.kind) });
  switch (step.kind) {
    case 'parallel':
      uniqueIds(problems, at, 'branches', step.branches);
      break;
    case 'map':
      checkItems(problems, `${at}/items`, step.items, scope);
      if (step.as !== undefined && (RESERVED_CONTEXT_NAMES as readonly string[]).includes(step.as))
        problems.push({
          path: `${at}/as`,
          message: `"${step.as}" is a name the context has already; choose another (not ${RESERVED_CONTEXT_NAMES.join(', ')})`,
        });
      break;
    case 'switch':
      uniqueIds(problems, at, 'cases', step.cases);
      step.cases.forEach((c, i) => {
        if (c.id === 'default')
          problems.push({
            path: `${at}/cases/${i}/id`,
            message:
              '"default" names the default steps in the output and runs of a switch; choose another case id',
          });
      });
      break;
    case 'loop':
      // Evaluated after each iteration: it reads that iteration's steps.
      checkExpression(problems, `${at}/until`, step.until, { ...scope, at: untilPlace(place) });
      break;
    case 'sleep':
      // A time written out (no template) is checked now rather than when the step runs.
      if (step.until !== undefined && !step.until.includes('{{') && parseRfc3339(step.until) === undefined)
        problems.push({
          path: `${at}/until`,
          message:
            'must be an RFC 3339 time such as "2026-12-01T09:00:00Z", or a template giving one such as "{{ input.send_at }}"',
        });
      break;
  }
}

/** Branch ids within a parallel step, case ids within a switch: each names its runs, so each is unique. */
function uniqueIds(
  problems: ErrorDetail[],
  at: string,
  field: 'branches' | 'cases',
  entries: readonly { id: string }[],
): void {
  const noun = field === 'branches' ? 'branch' : 'case';
  const seen = new Map<string, number>();
  entries.forEach((entry, i) => {
    const first = seen.get(entry.id);
    if (first === undefined) seen.set(entry.id, i);
    else
      problems.push({
        path: `${at}/${field}/${i}/id`,
        message: `duplicate ${noun} id "${entry.id}" (also at ${at}/${field}/${first})`,
      });
  });
}

/** A map's `items`: one expression, or one whole template (core/expressions/templates.ts itemsExpression). */
function checkItems(problems: ErrorDetail[], path: string, items: string, scope: Scope): void {
  const expression = itemsExpression(items);
  if (expression !== items) {
    checkExpression(problems, path, expression, scope, true);
  } else if (items.includes('{{') && !parses(items)) {
    problems.push({
      path,
      message:
        'must be one expression ("input.contacts") or one whole template ("{{ input.contacts }}"), not text around templates',
    });
  } else {
    checkExpression(problems, path, items, scope);
  }
}

function parses(expression: string): boolean {
  try {
    findReferences(expression);
    return true;
  } catch {
    return false;
  }
}

/** The `{{ }}` templates in the strings of `value` (at JSON pointer `at`), and secrets alone in their string. */
function checkTemplates(problems: ErrorDetail[], at: string, value: unknown, scope: Scope): void {
  for (const [path, text] of stringsWithPointers(value, at)) {
    const expressions = templateExpressions(text);
    for (const expression of expressions) checkExpression(problems, path, expression, scope, true);
    const secretTemplates = expressions.filter(readsSecrets).length;
    if (secretTemplates > 0 && secretTemplates < expressions.length) {
      problems.push({
        path,
        message:
          'a string that uses secrets cannot hold other templates; move the other values to another field',
      });
    }
  }
}

type ScheduleTrigger = Extract<NonNullable<Definition['trigger']>, { type: 'schedule' }>;

/**
 * A schedule trigger: exactly one of `cron` and `every`, an interval Temporal accepts, an IANA time zone
 * (its `input` is checked against the input_schema with the schemas; the cron expression itself is
 * checked by Temporal when the schedule is created; see src/definitions/schedule-sync.ts).
 */
function scheduleProblems(definition: Definition): ErrorDetail[] {
  const trigger = definition.trigger as ScheduleTrigger;
  const problems: ErrorDetail[] = [];
  if ((trigger.cron === undefined) === (trigger.every === undefined)) {
    problems.push({ path: '/trigger', message: 'a schedule trigger needs exactly one of "cron" or "every"' });
  }
  if (trigger.timezone !== undefined) {
    const problem = timeZoneProblem(trigger.timezone);
    if (problem) problems.push({ path: '/trigger/timezone', message: problem });
  }
  return problems;
}

/** Why a time zone name is not one Temporal loads (IANA names, exactly spelt), or undefined. */
function timeZoneProblem(name: string): string | undefined {
  const invalid = 'must be an IANA time zone name such as "UTC" or "Europe/Paris"';
  // Newer Intl versions accept UTC offsets ("+05:00"); Temporal does not.
  if (!/^[A-Za-z]/.test(name)) return invalid;
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return invalid;
  }
  // Intl ignores case, Temporal does not.
  if (resolved !== name && resolved.toLowerCase() === name.toLowerCase())
    return `must be spelt "${resolved}"`;
  return undefined;
}

/**
 * The JSONata expressions of a step read where the step is (as opposed to templates): `if`, a rule's `when`,
 * a case's `when`. A map's `items` and a loop's `until` have checks of their own (checkStep).
 */
function expressionsOf(step: Step): [string, string][] {
  const out: [string, string][] = [];
  if (step.if !== undefined) out.push(['/if', step.if]);
  if (step.kind === 'rules') step.rules.forEach((rule, i) => out.push([`/rules/${i}/when`, rule.when]));
  if (step.kind === 'switch') step.cases.forEach((c, i) => out.push([`/cases/${i}/when`, c.when]));
  // `match` sees the step's context plus `event`, which is no step: checked like any other expression.
  if (step.kind === 'wait_for_event' && step.match !== undefined) out.push(['/match', step.match]);
  return out;
}

/** The parts of a step whose strings are templates: everything but identity and control fields. */
export function stepConfiguration(step: Step): Record<string, unknown> {
  // Containers hold step lists, checked step by step; a sub-workflow step's templates are its input.
  if (step.kind === 'workflow') return { input: step.input };
  if (!isLeafStep(step)) return {};
  if (step.kind === 'sleep') return { until: step.until };
  // A wait's `match` is an expression (checked as one), its other fields plain values.
  if (step.kind === 'wait_for_event') return {};
  const {
    id: _id,
    name: _name,
    description: _d,
    if: _if,
    retry: _retry,
    timeout: _timeout,
    kind: _kind,
    ...config
  } = step;
  if (step.kind === 'rules') {
    return { rules: step.rules.map(({ when: _when, ...rule }) => rule), default: step.default };
  }
  return config;
}

function checkExpression(
  problems: ErrorDetail[],
  path: string,
  expression: string,
  scope: Scope,
  isTemplate = false,
): void {
  const label = isTemplate ? `template {{ ${expression} }}` : 'expression';
  if (expression === '') {
    problems.push({ path, message: 'empty template {{ }}' });
    return;
  }
  let refs;
  try {
    refs = findReferences(expression);
  } catch (error) {
    const message = error instanceof ExpressionError ? error.message : String(error);
    problems.push({ path, message: `${label} does not parse: ${message}` });
    return;
  }
  for (const stepId of refs.steps) {
    const why = unreadableStep(scope.at, scope.steps.get(stepId));
    if (why) problems.push({ path, message: `${label} refers to step "${stepId}", ${why}` });
  }
  if (!refs.roots.has('secrets')) return;
  if (!scope.secrets) {
    problems.push({
      path,
      message: `${label} reads secrets, which only connector and ai step templates can use`,
    });
  } else if ([...refs.roots].some((root) => root !== 'secrets')) {
    problems.push({
      path,
      message: `${label} mixes secrets with other data; a secrets template reads only secrets.NAME`,
    });
  } else if (refs.secrets.size === 0) {
    problems.push({ path, message: `${label} must name the secret, as in {{ secrets.NAME }}` });
  }
}
