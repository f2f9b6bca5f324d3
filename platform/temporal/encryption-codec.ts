/**
 * Encryption of what Switchyard writes into Temporal (docs/operations.md#encrypted-step-data): a Temporal
 * PayloadCodec that turns every payload (workflow input, step inputs and outputs in the step records,
 * results, update arguments, memo, summaries) into AES-256-GCM ciphertext before it leaves the process,
 * and back when it comes in. The API's client, the worker and the codec endpoint share it.
 *
 * An encrypted payload is `{encoding: binary/encrypted, encryption-key-id: <id>}` with data
 * `IV (12 bytes) ‖ ciphertext ‖ GCM tag (16 bytes)` of the whole original payload (metadata and data, as
 * protobuf). The key id is bound as additional authenticated data, so a payload relabelled with another
 * key id does not open. Decoding passes payloads of any other encoding through unchanged: histories
 * written before encryption was turned on stay readable.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { DataConverter, Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { PayloadKey } from '../payload-keys';

export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const KEY_ID_METADATA = 'encryption-key-id';

const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const ENCRYPTED_ENCODING_BYTES = Buffer.from(ENCRYPTED_ENCODING, 'utf8');
const ProtoPayload = temporal.api.common.v1.Payload;

/** A payload that cannot be decoded: a key this process does not hold, or data that fails authentication. */
export class PayloadDecryptionError extends Error {
  constructor(
    message: string,
    readonly keyId: string | undefined,
  ) {
    super(message);
    this.name = 'PayloadDecryptionError';
  }
}

export class EncryptionCodec implements PayloadCodec {
  private readonly current: PayloadKey;
  private readonly currentIdBytes: Uint8Array;
  private readonly byId: Map<string, Buffer>;

  /** @param keys the current key first, then older keys that only decode. */
  constructor(keys: readonly PayloadKey[]) {
    if (!keys[0]) throw new Error('EncryptionCodec needs at least one key');
    for (const { id, key } of keys) {
      if (key.length !== 32) throw new Error(`Payload key '${id}' is not 32 bytes`);
    }
    this.current = keys[0];
    this.currentIdBytes = Buffer.from(this.current.id, 'utf8');
    this.byId = new Map(keys.map(({ id, key }) => [id, key]));
  }

  /** The id new payloads are written with. */
  get currentKeyId(): string {
    return this.current.id;
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => this.encrypt(payload));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => this.decrypt(payload));
  }

  encrypt(payload: Payload): Payload {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, this.current.key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(this.currentIdBytes);
    const body = cipher.update(ProtoPayload.encode(payload).finish());
    const final = cipher.final();
    return {
      metadata: { encoding: ENCRYPTED_ENCODING_BYTES, [KEY_ID_METADATA]: this.currentIdBytes },
      data: Buffer.concat([iv, body, final, cipher.getAuthTag()]),
    };
  }

  decrypt(payload: Payload): Payload {
    if (!isEncrypted(payload)) return payload;
    const idBytes = payload.metadata?.[KEY_ID_METADATA];
    const keyId = idBytes ? Buffer.from(idBytes).toString('utf8') : undefined;
    const key = keyId === undefined ? undefined : this.byId.get(keyId);
    if (!key) {
      throw new PayloadDecryptionError(
        keyId === undefined
          ? 'An encrypted payload names no key'
          : `A payload is encrypted with key '${keyId}', which PAYLOAD_ENCRYPTION_KEYS does not hold`,
        keyId,
      );
    }
    const data = payload.data ?? new Uint8Array();
    if (data.length < IV_BYTES + TAG_BYTES)
      throw new PayloadDecryptionError(`A payload encrypted with key '${keyId}' is truncated`, keyId);
    const raw = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    const decipher = createDecipheriv(ALGORITHM, key, raw.subarray(0, IV_BYTES), {
      authTagLength: TAG_BYTES,
    });
    decipher.setAAD(idBytes!);
    decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
    let plain: Buffer;
    try {
      plain = Buffer.concat([
        decipher.update(raw.subarray(IV_BYTES, raw.length - TAG_BYTES)),
        decipher.final(),
      ]);
    } catch {
      throw new PayloadDecryptionError(
        `A payload encrypted with key '${keyId}' fails authentication (altered, or another key under that id)`,
        keyId,
      );
    }
    const decoded = ProtoPayload.decode(plain);
    return { metadata: decoded.metadata, data: decoded.data };
  }
}

export function isEncrypted(payload: Payload): boolean {
  const encoding = payload.metadata?.['encoding'];
  return (
    encoding !== undefined && encoding !== null && Buffer.from(encoding).equals(ENCRYPTED_ENCODING_BYTES)
  );
}

/** The codecs every Temporal client and worker of this process uses: none while encryption is off. */
export function payloadCodecsOf(keys: readonly PayloadKey[] | undefined): PayloadCodec[] {
  return keys && keys.length > 0 ? [new EncryptionCodec(keys)] : [];
}

/** A DataConverter with these codecs (the default converters otherwise). */
export function dataConverterOf(codecs: readonly PayloadCodec[]): DataConverter {
  return codecs.length > 0 ? { payloadCodecs: [...codecs] } : {};
}

/** Runs payloads through codecs' decode, the last codec first (as Temporal's SDK does). */
export async function decodePayloads(
  codecs: readonly PayloadCodec[],
  payloads: Payload[],
): Promise<Payload[]> {
  let decoded = payloads;
  for (let i = codecs.length - 1; i >= 0; i--) decoded = await codecs[i]!.decode(decoded);
  return decoded;
}

/** Runs payloads through codecs' encode, the first codec first. */
export async function encodePayloads(
  codecs: readonly PayloadCodec[],
  payloads: Payload[],
): Promise<Payload[]> {
  let encoded = payloads;
  for (const codec of codecs) encoded = await codec.encode(encoded);
  return encoded;
}
