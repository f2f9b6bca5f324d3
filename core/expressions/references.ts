/** What an expression reads from its context (input, steps, secrets), found by parsing it once. */
import { compileExpression } from './compile';
import { ExpressionError } from './errors';

/** What an expression reads from the evaluation context. */
export interface References {
  /** Top-level context names read: "input", "steps", "execution", "secrets", ... */
  roots: Set<string>;
  /** Step ids read as `steps.<id>`. */
  steps: Set<string>;
  /** True when `steps` is read as a whole (e.g. `$keys(steps)`), so any step may be read. */
  allSteps: boolean;
  /** Secret names read as `secrets.<NAME>`. */
  secrets: Set<string>;
  /**
   * It matches regular expressions: it holds a regex literal, or calls `$eval` (which may build one from
   * data). Such an evaluation can take long in one go (linear, but per character), so it runs off the
   * event loop (platform/compute/pool.ts).
   */
  regex: boolean;
}

interface AstNode {
  type?: string;
  value?: unknown;
  steps?: AstNode[];
  [key: string]: unknown;
}

/** Lists the context names and step ids an expression reads; throws ExpressionError on a syntax error. */
export function findReferences(expression: string): References {
  const cached = referencesCache.get(expression);
  if (cached instanceof ExpressionError) throw cached;
  if (cached) return cached;
  let refs: References | ExpressionError;
  try {
    const ast = compileExpression(expression).ast();
    refs = { roots: new Set(), steps: new Set(), allSteps: false, secrets: new Set(), regex: false };
    visit(ast, refs);
  } catch (error) {
    if (!(error instanceof ExpressionError)) throw error;
    refs = error;
  }
  if (referencesCache.size >= MAX_CACHED_REFERENCES)
    referencesCache.delete(referencesCache.keys().next().value!);
  referencesCache.set(expression, refs);
  if (refs instanceof ExpressionError) throw refs;
  return refs;
}

/**
 * What expressions read, by expression: parsing costs a hundred µs or more, and every run of a
 * definition asks again (which templates read secrets, where). The sets are shared: do not change them.
 */
const referencesCache = new Map<string, References | ExpressionError>();
const MAX_CACHED_REFERENCES = 5000;

function visit(node: unknown, refs: References): void {
  if (Array.isArray(node)) {
    for (const item of node) visit(item, refs);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  if (node instanceof RegExp) {
    refs.regex = true;
    return;
  }
  const ast = node as AstNode;
  if (ast.type === 'path' && Array.isArray(ast.steps)) recordPath(ast.steps, refs);
  if (ast.type === 'variable' && ast.value === 'eval') refs.regex = true;
  for (const child of Object.values(ast)) visit(child, refs);
}

function recordPath(steps: AstNode[], refs: References): void {
  // `$$.steps.x` and `$.steps.x` read from the root context just like `steps.x`.
  const offset = steps[0]?.type === 'variable' && (steps[0].value === '$' || steps[0].value === '') ? 1 : 0;
  const root = steps[offset];
  if (root?.type !== 'name' || typeof root.value !== 'string') return;
  refs.roots.add(root.value);
  const next = steps[offset + 1];
  if (root.value === 'secrets' && next?.type === 'name' && typeof next.value === 'string')
    refs.secrets.add(next.value);
  if (root.value !== 'steps') return;
  const step = next;
  if (step?.type === 'name' && typeof step.value === 'string' && !step['stages'] && !root['stages']) {
    refs.steps.add(step.value);
  } else {
    refs.allSteps = true;
  }
}

/** True when evaluating the expression may match regular expressions (References.regex). */
export function matchesRegex(expression: string): boolean {
  try {
    return findReferences(expression).regex;
  } catch {
    return false;
  }
}

/** True when the expression reads `secrets` (such templates are resolved inside activities). */
export function readsSecrets(expression: string): boolean {
  try {
    return findReferences(expression).roots.has('secrets');
  } catch {
    return false;
  }
}
