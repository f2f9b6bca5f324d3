/** How an expression fails: JSONata's own errors, and the limits' codes. */
/** ExpressionError codes of the evaluation limits. */
export const LIMIT_CODES = {
  budget: 'budget',
  time: 'time',
  tooLarge: 'too_large',
  unsafeRegex: 'unsafe_regex',
} as const;

export class ExpressionError extends Error {
  constructor(
    readonly expression: string,
    message: string,
    /** JSONata error code, e.g. "S0201" (syntax) or "T2001" (type); one of LIMIT_CODES when a limit was hit. */
    readonly code: string,
    readonly position: number | undefined,
  ) {
    super(message);
    this.name = 'ExpressionError';
  }
}

export interface JsonataFailure {
  code?: string;
  message?: string;
  position?: number;
  token?: string;
}

export function toExpressionError(expression: string, error: unknown): ExpressionError {
  if (error instanceof ExpressionError) return error;
  const failure = (
    typeof error === 'object' && error !== null ? error : { message: String(error) }
  ) as JsonataFailure;
  const where = failure.position !== undefined ? ` (at character ${failure.position})` : '';
  return new ExpressionError(
    expression,
    `${failure.message ?? 'expression failed'}${where}`,
    failure.code ?? 'unknown',
    failure.position,
  );
}
