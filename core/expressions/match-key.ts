/**
 * The index key of a `wait_for_event` match (docs/events.md): most matches are an equality
 * between a field of the event and a value known when the wait begins (`event.data.order_id =
 * input.order_id`). Such a wait is filed under (workspace, event name, the event field, the value), so an
 * event finds its waiters by one lookup instead of trying every waiter of its name.
 *
 * The key is a necessary condition, never the whole match: the run evaluates the full `match` over its
 * context and the event before it takes the event. So a match without such an equality (or with one this
 * module does not recognise) gets no key, and its waiters are tried one by one.
 */
import { compileExpression } from './compile';

export interface MatchKey {
  /** The event's side: a path into the event (`data`.`order_id`), JSONata over `{id, name, data}`. */
  eventPath: string;
  /** The other side: JSONata over the step's context (without `event`), evaluated when the wait begins. */
  valueExpression: string;
}

interface AstNode {
  type?: string;
  value?: unknown;
  position?: number;
  steps?: AstNode[];
  lhs?: AstNode;
  rhs?: AstNode;
  expressions?: AstNode[];
  [key: string]: unknown;
}

/**
 * A key's value as the index holds it, on both sides (the wait's value, the event's): JSON of a string,
 * number, boolean or null, which JSONata's `=` compares by value; undefined for anything else (no key).
 */
export function keyValueOf(value: unknown): string | undefined {
  if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) return JSON.stringify(value);
  return undefined;
}

/** A sub-expression and where its source lies in the whole expression. */
interface Span {
  node: AstNode;
  start: number;
  end: number;
}

/**
 * The key of `match`: the first of its top-level `and` terms that compares a plain path of `event` with
 * an expression that does not read the event; undefined when there is none (or `match` does not parse).
 */
export function matchKeyOf(match: string): MatchKey | undefined {
  let ast: AstNode;
  try {
    ast = compileExpression(match).ast() as AstNode;
  } catch {
    return undefined;
  }
  for (const term of conjuncts({ node: ast, start: 0, end: match.length })) {
    const key = equalityKey(term, match);
    if (key) return key;
  }
  return undefined;
}

/** The terms of a conjunction (`a and b and c`), through parentheses; the expression itself otherwise. */
function conjuncts(span: Span): Span[] {
  const { node } = span;
  // `( ... )`: the source inside starts after the parenthesis (its closing one is trimmed by sourceOf).
  if (node.type === 'block' && node.expressions?.length === 1)
    return conjuncts({ node: node.expressions[0]!, start: node.position ?? span.start, end: span.end });
  if (node.type !== 'binary' || node.value !== 'and' || typeof node.position !== 'number') return [span];
  // A binary node's position is where its operator ends: the left side's source lies before it.
  const operatorStart = node.position - 'and'.length;
  return [
    ...conjuncts({ node: node.lhs!, start: span.start, end: operatorStart }),
    ...conjuncts({ node: node.rhs!, start: node.position, end: span.end }),
  ];
}

function equalityKey(span: Span, source: string): MatchKey | undefined {
  const { node } = span;
  if (node.type !== 'binary' || node.value !== '=' || typeof node.position !== 'number') return undefined;
  const left: Span = { node: node.lhs!, start: span.start, end: node.position - 1 };
  const right: Span = { node: node.rhs!, start: node.position, end: span.end };
  for (const [eventSide, other] of [
    [left, right],
    [right, left],
  ] as const) {
    const eventPath = plainEventPath(eventSide.node);
    if (eventPath && !readsEvent(other.node)) {
      const valueExpression = sourceOf(other, source);
      if (valueExpression) return { eventPath, valueExpression };
    }
  }
  return undefined;
}

/** `event.a.b` (names only: no filter, index or function) as a path into the event: "`a`.`b`". */
function plainEventPath(node: AstNode): string | undefined {
  const steps = node.type === 'path' ? node.steps : undefined;
  if (!steps || steps.length < 2) return undefined;
  const plain = steps.every(
    (step) =>
      step.type === 'name' &&
      typeof step.value === 'string' &&
      !step.value.includes('`') &&
      Object.keys(step).every((key) => key === 'type' || key === 'value' || key === 'position'),
  );
  if (!plain || steps[0]!.value !== 'event') return undefined;
  return steps
    .slice(1)
    .map((step) => `\`${step.value as string}\``)
    .join('.');
}

/** Whether an expression may read the event: a path from `event`, or the whole context (`$`, `$$`). */
function readsEvent(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(readsEvent);
  if (typeof node !== 'object' || node === null) return false;
  const ast = node as AstNode;
  if (ast.type === 'path' && ast.steps?.[0]?.type === 'name' && ast.steps[0].value === 'event') return true;
  if (ast.type === 'name' && ast.value === 'event') return true;
  if (ast.type === 'variable' && (ast.value === '' || ast.value === '$')) return true;
  return Object.values(ast).some(readsEvent);
}

/**
 * The source of a sub-expression, cut from the whole one: positions in JSONata's tree mark where tokens end,
 * so the cut may carry closing parentheses of enclosing groups, which are trimmed. The cut is kept only if it
 * parses to the same tree as the sub-expression; otherwise there is no key (never a wrong one).
 */
function sourceOf(span: Span, source: string): string | undefined {
  let text = source.slice(span.start, span.end).trim();
  while (text.endsWith(')') && count(text, ')') > count(text, '(')) text = text.slice(0, -1).trimEnd();
  try {
    return sameTree(compileExpression(text).ast(), span.node) ? text : undefined;
  } catch {
    return undefined;
  }
}

function count(text: string, char: string): number {
  return text.split(char).length - 1;
}

/** Two syntax trees alike but for token positions. */
function sameTree(a: unknown, b: unknown): boolean {
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return Object.is(a, b);
  if (a instanceof RegExp || b instanceof RegExp)
    return a instanceof RegExp && b instanceof RegExp && a.source === b.source && a.flags === b.flags;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const keys = (value: object) => Object.keys(value).filter((key) => key !== 'position');
  const aKeys = keys(a);
  if (aKeys.length !== keys(b).length) return false;
  return aKeys.every(
    (key) =>
      Object.hasOwn(b, key) &&
      sameTree((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]),
  );
}
