/** The payload encryption keys of PAYLOAD_ENCRYPTION_KEYS: their shape and how the configuration reads them. */

/** A key id as PAYLOAD_ENCRYPTION_KEYS spells it. */
export const KEY_ID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;

export interface PayloadKey {
  id: string;
  /** 32 bytes. */
  key: Buffer;
}

/**
 * PAYLOAD_ENCRYPTION_KEYS: comma-separated `id:base64key`, the first one current (new payloads), every one
 * able to decode. Returns the problems instead of throwing, for the configuration's report.
 */
export function parsePayloadKeys(text: string): { keys: PayloadKey[]; problems: string[] } {
  const keys: PayloadKey[] = [];
  const problems: string[] = [];
  for (const [index, entry] of text.split(',').entries()) {
    const item = entry.trim();
    const colon = item.indexOf(':');
    const id = colon > 0 ? item.slice(0, colon) : '';
    const encoded = colon > 0 ? item.slice(colon + 1).trim() : '';
    if (!KEY_ID_PATTERN.test(id)) {
      problems.push(
        `key ${index + 1}: expected id:base64key with an id of 1-64 letters, digits, '.', '_' or '-'`,
      );
      continue;
    }
    const key = /^[A-Za-z0-9+/_-]+={0,2}$/.test(encoded) ? Buffer.from(encoded, 'base64') : Buffer.alloc(0);
    if (key.length !== 32) {
      problems.push(`key '${id}': must be 32 bytes in base64 (e.g. \`openssl rand -base64 32\`)`);
      continue;
    }
    if (keys.some((known) => known.id === id)) {
      problems.push(`key '${id}': the same id twice`);
      continue;
    }
    keys.push({ id, key });
  }
  return { keys, problems };
}
