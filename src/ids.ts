/** Identifiers and keys: prefixed, random, base62 (URL- and shell-safe, easy to copy). */
import { randomBytes, createHash } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Uniform random base62 text (rejection sampling, so no character is more likely than another). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export const newExecutionId = (): string => `ex_${randomBase62(24)}`;
export const newApiKeyId = (): string => `key_${randomBase62(20)}`;
export const newWorkspaceId = (): string => `ws_${randomBase62(16)}`;
/** An API key: `sk_` + 40 base62 characters (about 238 bits). */
export const newApiKey = (): string => `sk_${randomBase62(40)}`;

export const EXECUTION_ID_PATTERN = /^ex_[A-Za-z0-9]{1,64}$/;
export const API_KEY_PATTERN = /^sk_[A-Za-z0-9]{32,128}$/;

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}
