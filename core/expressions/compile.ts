/** Parsing an expression: JSONata's syntax, plus the refusal of regular expressions RE2 cannot run. */
import jsonata from 'jsonata';
import { ExpressionError, LIMIT_CODES, toExpressionError } from './errors';
import { linearRegexProblem } from './linear-regex';

/**
 * Compiles an expression; throws ExpressionError with JSONata's message on a syntax error, and on a
 * regular expression that needs backtracking (linear-regex.ts).
 */
export function compileExpression(expression: string): jsonata.Expression {
  let compiled: jsonata.Expression;
  try {
    compiled = jsonata(expression);
  } catch (error) {
    throw toExpressionError(expression, error);
  }
  for (const re of regexLiterals(compiled.ast())) {
    const problem = linearRegexProblem(re.source, re.flags);
    if (problem) throw new ExpressionError(expression, problem, LIMIT_CODES.unsafeRegex, undefined);
  }
  return compiled;
}

/** The regular expression literals of a parsed expression. */
export function regexLiterals(ast: unknown): RegExp[] {
  const found: RegExp[] = [];
  const pending: unknown[] = [ast];
  while (pending.length > 0) {
    const node = pending.pop();
    if (node instanceof RegExp) found.push(node);
    else if (typeof node === 'object' && node !== null) pending.push(...(Object.values(node) as unknown[]));
  }
  return found;
}
