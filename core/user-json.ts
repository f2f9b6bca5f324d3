/**
 * User JSON is data: a key such as `__proto__`, `constructor` or `prototype` in a definition, an input, a
 * connector body or a response is an ordinary key, kept and sent as given, and changes nothing else.
 *
 * Only `__proto__` is dangerous to plain objects: `object["__proto__"] = value` does not add a key, it
 * replaces the object's prototype (and `object["__proto__"]` reads `Object.prototype` when the key is
 * absent, so a write through it reaches every object in the process). JSON.parse, spread, structuredClone
 * and Object.fromEntries create own properties and are safe; assignment with a user key and Object.assign
 * are not. Code that builds or walks objects by user keys goes through these helpers.
 */

/** Sets `key` as an own data property of `target`, whatever the key (`__proto__` included). */
export function setOwn(target: object, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** The own property `key` of `value`, or undefined: never an inherited one (`__proto__`, `constructor`). */
export function getOwn(value: unknown, key: string): unknown {
  if (typeof value !== 'object' || value === null) return undefined;
  return Object.hasOwn(value, key) ? (value as Record<string, unknown>)[key] : undefined;
}

/**
 * A plain object of `entries`, built with own properties (Object.fromEntries defines, never assigns), so
 * a `__proto__` entry stays an entry.
 */
export function objectFromEntries<T>(entries: Iterable<readonly [string, T]>): Record<string, T> {
  return Object.fromEntries(entries);
}

/**
 * zod cannot keep a `__proto__` key of a record (it would have to assign it), so it drops it without a
 * word. Before zod sees user JSON, such keys are renamed to a stand-in that no key can collide with
 * (`\u0000` + the key; keys that already start with `\u0000` are escaped the same way), and restored in
 * its output. JSON from HTTP bodies and definitions never holds U+0000 in stored keys (PostgreSQL refuses
 * it), so the escape is unambiguous.
 */
const ESCAPE = '\u0000';

function needsEscape(key: string): boolean {
  return key === '__proto__' || key.startsWith(ESCAPE);
}

/** Whether any key of `value`, at any depth, must be escaped for zod (walked without recursion). */
function hasEscapableKeys(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const item = pending.pop();
    if (typeof item !== 'object' || item === null) continue;
    if (Array.isArray(item)) {
      for (const child of item) pending.push(child);
      continue;
    }
    for (const [key, child] of Object.entries(item)) {
      if (needsEscape(key)) return true;
      pending.push(child);
    }
  }
  return false;
}

function mapKeys(value: unknown, rename: (key: string) => string): unknown {
  if (Array.isArray(value)) return value.map((item) => mapKeys(item, rename));
  if (typeof value !== 'object' || value === null) return value;
  return objectFromEntries(Object.entries(value).map(([key, item]) => [rename(key), mapKeys(item, rename)]));
}

export function escapeKey(key: string): string {
  return needsEscape(key) ? ESCAPE + key : key;
}

export function unescapeKey(key: string): string {
  return key.startsWith(ESCAPE) ? key.slice(ESCAPE.length) : key;
}

/** `value` with every `__proto__` key renamed for zod, or `value` itself when it holds none. */
export function escapeKeysForValidation(value: unknown): { value: unknown; escaped: boolean } {
  if (!hasEscapableKeys(value)) return { value, escaped: false };
  return { value: mapKeys(value, escapeKey), escaped: true };
}

/** Undoes escapeKeysForValidation on a validator's output. */
export function restoreEscapedKeys(value: unknown): unknown {
  return mapKeys(value, unescapeKey);
}

/**
 * Whether two JSON values are equal: the same primitives, arrays of equal values in order, objects with the
 * same own keys (in any order) and equal values. Deterministic and free of Node built-ins (workflow code
 * uses it).
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((value, i) => sameJson(value, other[i]));
  }
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => Object.hasOwn(b, key) && sameJson(getOwn(a, key), getOwn(b, key)));
}
