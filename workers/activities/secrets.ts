/**
 * Resolving `{{ secrets.NAME }}` inside activities. Only the strings at the pointers the workflow names
 * (strings of the definition itself) are resolved; everything the activity returns or throws is masked,
 * so a secret echoed back by a server never reaches history, the API or the logs.
 */
import { ApplicationFailure } from '@temporalio/activity';
import { findReferences } from '../../core/expressions/references';
import { resolveTemplates, templateExpressions } from '../../core/expressions/templates';
import { STEP_ERROR_CODES } from '../../core/execution-types';
import { getOwn, setOwn } from '../../core/user-json';

export type SecretLookup = (workspaceId: string, names: string[]) => Promise<Record<string, string>>;

export interface SecretResolution {
  /** The value with secrets filled in: use it, never record it. */
  value: unknown;
  mask<T>(value: T): T;
  maskFailure(failure: ApplicationFailure): ApplicationFailure;
}

export const MASK = '***';
/** Shorter values would mask ordinary text everywhere; such secrets are refused at PUT time anyway. */
const MIN_MASKED_LENGTH = 3;

export function createSecretResolver(lookup: SecretLookup) {
  return async function resolveSecrets(
    workspaceId: string,
    value: unknown,
    pointers: string[],
  ): Promise<SecretResolution> {
    if (pointers.length === 0) return { value, mask: (v) => v, maskFailure: (f) => f };
    const names = new Set<string>();
    const targets = pointers.map((pointer) => ({ pointer, text: getAt(value, pointer) }));
    for (const { text } of targets) {
      if (typeof text !== 'string') continue;
      for (const expression of templateExpressions(text))
        findReferences(expression).secrets.forEach((n) => names.add(n));
    }
    const secrets = await lookup(workspaceId, [...names]);
    const missing = [...names].filter((name) => !(name in secrets));
    if (missing.length > 0) {
      throw ApplicationFailure.nonRetryable(
        `Secret${missing.length > 1 ? 's' : ''} ${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} not set in this workspace (PUT /v1/secrets/{name}).`,
        'secret_not_found',
      );
    }
    const resolved = structuredClone(value);
    for (const { pointer, text } of targets) {
      if (typeof text === 'string') setAt(resolved, pointer, await resolveTemplates(text, { secrets }));
    }
    // Each value as given and as URL encoding writes it (a secret in a URL's path or query is recorded
    // percent-encoded), longest first so that no shorter value masks part of a longer one.
    const values = [
      ...new Set(Object.values(secrets).flatMap((v) => [v, encodeURIComponent(v), encodeURI(v)])),
    ]
      .filter((v) => v.length >= MIN_MASKED_LENGTH)
      .sort((a, b) => b.length - a.length);
    const maskText = (text: string): string =>
      values.reduce((out, secret) => out.split(secret).join(MASK), text);
    const mask = <T>(v: T): T => maskDeep(v, maskText) as T;
    return {
      value: resolved,
      mask,
      maskFailure: (failure) =>
        ApplicationFailure.create({
          type: failure.type ?? STEP_ERROR_CODES.stepFailed,
          message: maskText(failure.message),
          nonRetryable: failure.nonRetryable ?? false,
          details: mask<unknown[]>(failure.details ?? []),
          ...(failure.nextRetryDelay != null ? { nextRetryDelay: failure.nextRetryDelay } : {}),
        }),
    };
  };
}

function maskDeep(value: unknown, maskText: (text: string) => string): unknown {
  if (typeof value === 'string') return maskText(value);
  if (Array.isArray(value)) return value.map((item) => maskDeep(item, maskText));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [maskText(k), maskDeep(v, maskText)]));
  }
  return value;
}

function segments(pointer: string): string[] {
  return pointer
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/**
 * Pointers name keys of the user's definition (`__proto__` among them): only own properties are read and
 * written, so no pointer can reach Object.prototype (core/user-json.ts).
 */
function getAt(value: unknown, pointer: string): unknown {
  return segments(pointer).reduce<unknown>((current, key) => getOwn(current, key), value);
}

function setAt(value: unknown, pointer: string, replacement: unknown): void {
  const keys = segments(pointer);
  const last = keys.pop();
  const parent = keys.reduce<unknown>((current, key) => getOwn(current, key), value);
  if (last !== undefined && typeof parent === 'object' && parent !== null && Object.hasOwn(parent, last))
    setOwn(parent, last, replacement);
}
