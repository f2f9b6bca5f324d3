/** Regular expressions that cannot backtrack without bound. */
/**
 * Whether a regular expression repeats something that itself repeats, as in `(a+)+` or `(\w*\s?)*`:
 * the shape that backtracks exponentially. One such match can run for minutes on a 30-character
 * string, inside one evaluation step that no budget can interrupt (and in workflow code, past the
 * SDK's time limit, which can bring the worker down). Conservative: `([a-z]+\.)+` is refused too.
 */
export function hasNestedQuantifier(source: string): boolean {
  const quantifierAt = (j: number): boolean =>
    source[j] === '*' ||
    source[j] === '+' ||
    source[j] === '?' ||
    (source[j] === '{' && /^\{\d+(,\d*)?\}/.test(source.slice(j, j + 24)));
  // Per open group: whether it holds a quantifier.
  const groups: boolean[] = [false];
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') {
      i += 1;
    } else if (c === '[') {
      for (i += 1; i < source.length && source[i] !== ']'; i++) if (source[i] === '\\') i += 1;
    } else if (c === '(') {
      groups.push(false);
      if (source[i + 1] === '?') i += 1; // (?: (?= (?! (?<= (?<! (?<name>: not a quantifier
    } else if (c === ')') {
      const inner = groups.pop() ?? false;
      const repeated = quantifierAt(i + 1);
      if (inner && repeated) return true;
      if (groups.length === 0) groups.push(false);
      if (inner || repeated) groups[groups.length - 1] = true;
    } else if (quantifierAt(i)) {
      groups[groups.length - 1] = true;
    }
  }
  return false;
}

export function unsafeRegexMessage(re: RegExp): string {
  return `regular expression /${re.source}/ repeats a repeated group, which can backtrack without bound; rewrite it without nested quantifiers`;
}
