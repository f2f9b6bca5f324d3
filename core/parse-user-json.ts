/**
 * Validating user JSON with zod without losing keys: zod drops a record's `__proto__` key (user-json.ts
 * says why), so the value is validated with such keys escaped and zod's output has them restored. Issue
 * paths and messages name the keys as the user wrote them.
 */
import type { z } from 'zod';
import { escapeKeysForValidation, restoreEscapedKeys, unescapeKey } from './user-json';

export type UserJsonParse<T> = { success: true; data: T } | { success: false; issues: z.core.$ZodIssue[] };

export function parseUserJson<T extends z.ZodType>(schema: T, value: unknown): UserJsonParse<z.output<T>> {
  const { value: input, escaped } = escapeKeysForValidation(value);
  const parsed = schema.safeParse(input);
  if (parsed.success)
    return { success: true, data: (escaped ? restoreEscapedKeys(parsed.data) : parsed.data) as z.output<T> };
  const issues = parsed.error.issues;
  return { success: false, issues: escaped ? issues.map(unescapeIssue) : issues };
}

function unescapeIssue(issue: z.core.$ZodIssue): z.core.$ZodIssue {
  const path = issue.path.map((part) => (typeof part === 'string' ? unescapeKey(part) : part));
  if (issue.code === 'unrecognized_keys') return { ...issue, path, keys: issue.keys.map(unescapeKey) };
  return { ...issue, path };
}
