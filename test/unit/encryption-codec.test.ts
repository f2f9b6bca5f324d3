import { randomBytes } from 'node:crypto';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../platform/config';
import { embeddedCodecEndpoint } from '../../processes/embedded-temporal';
import { devServerArgs } from '../../platform/temporal/dev-server';
import {
  ENCRYPTED_ENCODING,
  EncryptionCodec,
  KEY_ID_METADATA,
  PayloadDecryptionError,
} from '../../platform/temporal/encryption-codec';
import { parsePayloadKeys } from '../../platform/payload-keys';

const keyA = { id: 'a', key: randomBytes(32) };
const keyB = { id: 'b', key: randomBytes(32) };
const text = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? []).toString('utf8');
const payloadOf = (value: unknown): Payload => defaultPayloadConverter.toPayload(value);

describe('payload encryption codec', () => {
  it('round-trips a payload, metadata included, with no clear text left', async () => {
    const codec = new EncryptionCodec([keyA]);
    const original = payloadOf({ customer: 'Zebulon Quartermaine', plan: 'pro' });
    const [encrypted] = await codec.encode([original]);
    expect(text(encrypted!.metadata!['encoding'])).to.equal(ENCRYPTED_ENCODING);
    expect(text(encrypted!.metadata![KEY_ID_METADATA])).to.equal('a');
    expect(Buffer.from(encrypted!.data!).includes('Zebulon')).to.equal(false);
    expect(Buffer.from(encrypted!.data!).includes('json/plain')).to.equal(false);
    const [decoded] = await codec.decode([encrypted!]);
    expect(defaultPayloadConverter.fromPayload(decoded!)).to.deep.equal({
      customer: 'Zebulon Quartermaine',
      plan: 'pro',
    });
    expect(text(decoded!.metadata!['encoding'])).to.equal('json/plain');
  });

  it('uses a fresh IV for each payload', async () => {
    const codec = new EncryptionCodec([keyA]);
    const [one, two] = await codec.encode([payloadOf('same'), payloadOf('same')]);
    expect(Buffer.from(one!.data!).equals(Buffer.from(two!.data!))).to.equal(false);
  });

  it('passes plain payloads through on decode (histories written before encryption)', async () => {
    const codec = new EncryptionCodec([keyA]);
    const plain = payloadOf({ hello: 'world' });
    const [decoded] = await codec.decode([plain]);
    expect(decoded).to.equal(plain);
    const binary: Payload = { metadata: { encoding: Buffer.from('binary/null') } };
    expect((await codec.decode([binary]))[0]).to.equal(binary);
  });

  it('rotates: the first key writes, every key reads', async () => {
    const [old] = await new EncryptionCodec([keyA]).encode([payloadOf('old')]);
    const rotated = new EncryptionCodec([keyB, keyA]);
    expect(defaultPayloadConverter.fromPayload((await rotated.decode([old!]))[0]!)).to.equal('old');
    const [fresh] = await rotated.encode([payloadOf('new')]);
    expect(text(fresh!.metadata![KEY_ID_METADATA])).to.equal('b');
  });

  it('refuses a payload whose key it does not hold', async () => {
    const [encrypted] = await new EncryptionCodec([keyA]).encode([payloadOf('x')]);
    const error = await new EncryptionCodec([keyB]).decode([encrypted!]).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(PayloadDecryptionError);
    expect((error as Error).message).to.contain("key 'a'");
  });

  it('refuses altered ciphertext, a relabelled key id, another key under the same id, and truncation', async () => {
    const codec = new EncryptionCodec([keyA, keyB]);
    const [encrypted] = await codec.encode([payloadOf({ amount: 100 })]);
    const tampered = Buffer.from(encrypted!.data!);
    tampered[20] = tampered[20]! ^ 1;
    const cases: Payload[] = [
      { metadata: encrypted!.metadata, data: tampered },
      { metadata: { ...encrypted!.metadata, [KEY_ID_METADATA]: Buffer.from('b') }, data: encrypted!.data },
      { metadata: encrypted!.metadata, data: Buffer.from(encrypted!.data!).subarray(0, 20) },
    ];
    for (const payload of cases) {
      const error = await codec.decode([payload]).catch((e: unknown) => e);
      expect(error).to.be.instanceOf(PayloadDecryptionError);
    }
    const sameIdOtherKey = new EncryptionCodec([{ id: 'a', key: randomBytes(32) }]);
    expect(await sameIdOtherKey.decode([encrypted!]).catch((e: unknown) => e)).to.be.instanceOf(
      PayloadDecryptionError,
    );
  });

  it('parses PAYLOAD_ENCRYPTION_KEYS strictly', () => {
    const a = randomBytes(32).toString('base64');
    const b = randomBytes(32).toString('base64url');
    const parsed = parsePayloadKeys(` k2:${a} , k1:${b}`);
    expect(parsed.problems).to.deep.equal([]);
    expect(parsed.keys.map((key) => key.id)).to.deep.equal(['k2', 'k1']);
    expect(parsed.keys[0]!.key.equals(Buffer.from(a, 'base64'))).to.equal(true);
    expect(parsePayloadKeys(`k:${randomBytes(16).toString('base64')}`).problems).to.have.length(1);
    expect(parsePayloadKeys(a).problems).to.have.length(1);
    expect(parsePayloadKeys(`k:${a},k:${a}`).problems).to.have.length(1);
    expect(parsePayloadKeys(`bad id:${a}`).problems).to.have.length(1);
  });

  it('is off by default and reported with the other configuration problems', () => {
    expect(loadConfig({}).payloadEncryptionKeys).to.equal(undefined);
    const key = randomBytes(32).toString('base64');
    expect(loadConfig({ PAYLOAD_ENCRYPTION_KEYS: `v1:${key}` }).payloadEncryptionKeys?.[0]?.id).to.equal(
      'v1',
    );
    let error: unknown;
    try {
      loadConfig({ PAYLOAD_ENCRYPTION_KEYS: 'v1:short', PORT: 'x' });
    } catch (e) {
      error = e;
    }
    expect(error).to.be.instanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    expect(problems).to.contain('PAYLOAD_ENCRYPTION_KEYS');
    expect(problems).to.contain('PORT');
    expect(problems).not.to.contain('short');
  });

  it('points the embedded Temporal UI at the codec endpoint only while encryption is on', () => {
    const key = randomBytes(32).toString('base64');
    expect(embeddedCodecEndpoint(loadConfig({}))).to.equal(undefined);
    const on = loadConfig({ PAYLOAD_ENCRYPTION_KEYS: `k:${key}`, PORT: '3100' });
    expect(embeddedCodecEndpoint(on)).to.equal('http://127.0.0.1:3100/codec');
    const options = { dataDir: '/tmp/x', ip: '127.0.0.1', port: 7233, uiPort: 8233, namespace: 'default' };
    const args = devServerArgs({ ...options, uiCodecEndpoint: 'http://127.0.0.1:3100/codec' });
    expect(
      args.slice(args.indexOf('--ui-codec-endpoint'), args.indexOf('--ui-codec-endpoint') + 2),
    ).to.deep.equal(['--ui-codec-endpoint', 'http://127.0.0.1:3100/codec']);
    expect(devServerArgs(options)).not.to.include('--ui-codec-endpoint');
    expect(devServerArgs({ ...options, uiPort: 0, uiCodecEndpoint: 'http://x/codec' })).not.to.include(
      '--ui-codec-endpoint',
    );
  });
});
