/**
 * Validates a workflow definition: the zod schema first, then what a schema cannot say (unique step
 * ids, expressions that parse, references only to earlier steps, secrets only where they are resolved,
 * an input_schema that compiles). Every problem is reported at once, with a JSON pointer.
 */
import type { z } from 'zod';
import { AppError, type ErrorDetail } from '../../platform/errors';
import { ExpressionError } from '../../core/expressions/errors';
import { findReferences, readsSecrets } from '../../core/expressions/references';
import { stringsWithPointers, templateExpressions } from '../../core/expressions/templates';
import type { SchemaValidation } from '../../platform/compute/schemas';
import { definitionSchema, type Definition, type Step } from '../../core/definitions/schema';
import { isLeafStep } from '../../core/definitions/step-kinds';
import { parseUserJson } from '../../core/parse-user-json';

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
  const problems = [
    ...checkDefinition(definition),
    ...(await schemaProblems(definition, schemas, workspaceId)),
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
  schemas: SchemaValidation,
  workspaceId: string,
): Promise<ErrorDetail[]> {
  const problems: ErrorDetail[] = [];
  for (const [index, step] of definition.steps.entries()) {
    if (step.kind !== 'ai' || !step.output_schema) continue;
    const problem = await schemas.check(workspaceId, step.output_schema);
    if (problem)
      problems.push({
        path: `/steps/${index}/output_schema`,
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

function checkDefinition(definition: Definition): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const earlier = new Set<string>();
  definition.steps.forEach((step, index) => {
    const at = `/steps/${index}`;
    if (step.id === 'trigger')
      problems.push({ path: `${at}/id`, message: '"trigger" is reserved for the trigger step' });
    else if (earlier.has(step.id))
      problems.push({ path: `${at}/id`, message: `duplicate step id "${step.id}"` });
    for (const [path, expression] of expressionsOf(step))
      checkExpression(problems, `${at}${path}`, expression, earlier, false);
    for (const [path, text] of stringsWithPointers(stepConfiguration(step))) {
      const expressions = templateExpressions(text);
      for (const expression of expressions) {
        checkExpression(problems, `${at}${path}`, expression, earlier, SECRET_KINDS.has(step.kind), true);
      }
      const secretTemplates = expressions.filter(readsSecrets).length;
      if (secretTemplates > 0 && secretTemplates < expressions.length) {
        problems.push({
          path: `${at}${path}`,
          message:
            'a string that uses secrets cannot hold other templates; move the other values to another field',
        });
      }
    }
    earlier.add(step.id);
  });
  if (definition.trigger?.type === 'schedule') problems.push(...scheduleProblems(definition));
  return problems;
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

/** The JSONata expressions of a step (as opposed to templates): `if` and each rule's `when`. */
function expressionsOf(step: Step): [string, string][] {
  const out: [string, string][] = [];
  if (step.if !== undefined) out.push(['/if', step.if]);
  if (step.kind === 'rules') step.rules.forEach((rule, i) => out.push([`/rules/${i}/when`, rule.when]));
  return out;
}

/** The parts of a step whose strings are templates: everything but identity and control fields. */
export function stepConfiguration(step: Step): Record<string, unknown> {
  // Containers hold step lists, checked step by step; a sub-workflow step's templates are its input.
  if (step.kind === 'workflow') return { input: step.input };
  if (!isLeafStep(step)) return {};
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
  earlier: Set<string>,
  secretsAllowed: boolean,
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
    if (!earlier.has(stepId)) {
      problems.push({
        path,
        message: `${label} refers to step "${stepId}", which does not come earlier in the workflow`,
      });
    }
  }
  if (!refs.roots.has('secrets')) return;
  if (!secretsAllowed) {
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
