/** Parsing an expression: JSONata's syntax, plus the refusal of regular expressions that backtrack without bound. */
import jsonata from 'jsonata';
import { ExpressionError, LIMIT_CODES, toExpressionError } from './errors';
import { hasNestedQuantifier, unsafeRegexMessage } from './safe-regex';

/**
 * Compiles an expression; throws ExpressionError with JSONata's message on a syntax error, and on a
 * regular expression that could backtrack without bound (see hasNestedQuantifier).
 */
export function compileExpression(expression: string): jsonata.Expression {
  let compiled: jsonata.Expression;
  try {
    compiled = jsonata(expression);
  } catch (error) {
    throw toExpressionError(expression, error);
  }
  const unsafe = regexLiterals(compiled.ast()).find((re) => hasNestedQuantifier(re.source));
  if (unsafe)
    throw new ExpressionError(expression, unsafeRegexMessage(unsafe), LIMIT_CODES.unsafeRegex, undefined);
  return compiled;
}

function regexLiterals(ast: unknown): RegExp[] {
  const found: RegExp[] = [];
  const pending: unknown[] = [ast];
  while (pending.length > 0) {
    const node = pending.pop();
    if (node instanceof RegExp) found.push(node);
    else if (typeof node === 'object' && node !== null) pending.push(...(Object.values(node) as unknown[]));
  }
  return found;
}
