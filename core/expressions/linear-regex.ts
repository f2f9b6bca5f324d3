/**
 * Regular expressions from users run on RE2 semantics (re2js, a JavaScript port of RE2): matching takes
 * time linear in the input, whatever the pattern. JavaScript's own engine backtracks: `/^(a|a)*$/` against
 * thirty characters runs for seconds, and no budget can interrupt one match. Patterns that need
 * backtracking (backreferences, lookahead, lookbehind) cannot run on RE2 and are refused when a definition
 * is saved (linearRegexProblem).
 */
import { RE2JS } from 're2js';

/** A pattern RE2 cannot run; the message says which and why. */
export class UnsupportedRegexError extends Error {
  constructor(source: string, reason: string) {
    super(
      `regular expression /${source}/ cannot run in linear time (RE2 syntax: no backreferences or lookaround): ${reason}`,
    );
    this.name = 'UnsupportedRegexError';
  }
}

/** Why RE2 cannot run this JavaScript pattern, or undefined when it can. */
export function linearRegexProblem(source: string, flags = ''): string | undefined {
  try {
    compileLinear(source, flags);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/** Throws UnsupportedRegexError when RE2 cannot run the pattern. */
export function compileLinear(source: string, flags: string): RE2JS {
  let re2Flags = 0;
  if (flags.includes('i')) re2Flags |= RE2JS.CASE_INSENSITIVE;
  if (flags.includes('m')) re2Flags |= RE2JS.MULTILINE;
  if (flags.includes('s')) re2Flags |= RE2JS.DOTALL;
  try {
    return RE2JS.compile(RE2JS.translateRegExp(source), re2Flags);
  } catch (error) {
    throw new UnsupportedRegexError(source, (error as Error).message);
  }
}

/**
 * The part of RegExp that JSONata's regex functions use (`$match`, `$replace`, `$split`, `$contains`):
 * `exec` from `lastIndex`, which it sets after each match. Indices are UTF-16 code units, as in JavaScript.
 */
export class LinearRegExp {
  readonly source: string;
  readonly flags: string;
  lastIndex = 0;
  private readonly compiled: RE2JS;

  /** Throws when the pattern cannot run on RE2 (see linearRegexProblem). */
  constructor(pattern: RegExp | string, flags?: string) {
    this.source = typeof pattern === 'string' ? pattern : pattern.source;
    this.flags = flags ?? (typeof pattern === 'string' ? '' : pattern.flags);
    this.compiled = compileLinear(this.source, this.flags);
  }

  get global(): boolean {
    return this.flags.includes('g');
  }

  exec(input: string): RegExpExecArray | null {
    const start = this.global ? this.lastIndex : 0;
    if (start > input.length) {
      this.lastIndex = 0;
      return null;
    }
    const matcher = this.compiled.matcher(input);
    if (!matcher.find(start)) {
      this.lastIndex = 0;
      return null;
    }
    const groups: (string | undefined)[] = [];
    for (let i = 0; i <= matcher.groupCount(); i++) groups.push(matcher.group(i) ?? undefined);
    const match = Object.assign(groups, { index: matcher.start(), input }) as unknown as RegExpExecArray;
    if (this.global) this.lastIndex = matcher.end();
    return match;
  }

  test(input: string): boolean {
    return this.exec(input) !== null;
  }
}
