/**
 * Comparisons of secrets (docs/webhooks.md#signing-a-request: "in constant time"). Timing itself is not
 * measurable reliably in a test, so these pin the behaviour a constant-time comparison has and the usual
 * shortcuts lack: the inbound hook signature is compared over whole byte strings (a prefix of the right HMAC,
 * or the right one with more bytes, is refused), values of any length are refused without an exception, and
 * the answer is the same 401 whatever is wrong. Signature checks use crypto.timingSafeEqual through
 * constantTimeEqual (src/inbound-hooks/signature.ts). API keys are never compared at all: the database is asked for
 * the key's SHA-256 (keys.test.ts, "lookup by hash only").
 */
import { expect } from 'chai';
import request from 'supertest';
import { computeSignature, constantTimeEqual, verifySignature } from '../../src/inbound-hooks/signature';
import { definition, rulesStep, waitForExecution } from '../support/fixtures';
import type { TestService } from '../support/stack';
import { expectErrorOf, sharedService } from './support';

const SECRET = 'whsec_c2VjdXJpdHktc3VpdGUtc2VjcmV0LTAxMjM0NTY3';
const NOW = 1_700_000_000;
const BODY = Buffer.from('{"customer":"Ada"}');
const RIGHT = computeSignature(SECRET, String(NOW), BODY);

const verify = (v1: string) =>
  verifySignature({ header: `t=${NOW},v1=${v1}`, rawBody: BODY, secrets: [SECRET], now: NOW });

/** Hex values of the wrong length, and the right one cut short or extended. */
const WRONG_SIGNATURES: [string, string][] = [
  ...[1, 16, 31, 33, 64, 512, 4000].map((bytes): [string, string] => [`${bytes} bytes`, 'ab'.repeat(bytes)]),
  ...[1, 8, 16, 31].map((bytes): [string, string] => [
    `the right one's first ${bytes} bytes`,
    RIGHT.slice(0, bytes * 2),
  ]),
  ['the right one and a byte more', `${RIGHT}00`],
  ['the right one twice', `${RIGHT}${RIGHT}`],
  ['the right one with its last byte changed', `${RIGHT.slice(0, -2)}${RIGHT.endsWith('00') ? '01' : '00'}`],
  ['an odd number of hex digits', RIGHT.slice(0, -1)],
  ['not hex', 'zz'.repeat(32)],
];

describe('security: constant-time comparisons @integration', function () {
  describe('verifySignature', () => {
    it('accepts the right signature (the control)', () => {
      expect(verify(RIGHT).ok).to.equal(true);
    });

    for (const [what, v1] of WRONG_SIGNATURES) {
      it(`refuses ${what}, without throwing`, () => {
        expect(verify(v1)).to.deep.equal({ ok: false, reason: 'mismatch' });
      });
    }

    it('finds the right value among wrong ones of other lengths', () => {
      expect(verify(`${'ab'.repeat(3)},v1=${RIGHT.slice(0, 20)},v1=${RIGHT}`).ok).to.equal(true);
    });

    it('compares empty and non-empty byte strings without throwing', () => {
      expect(constantTimeEqual(Buffer.alloc(0), Buffer.from(RIGHT, 'hex'))).to.equal(false);
      expect(constantTimeEqual(Buffer.from(RIGHT, 'hex'), Buffer.alloc(0))).to.equal(false);
      expect(constantTimeEqual(Buffer.alloc(0), Buffer.alloc(0))).to.equal(true);
    });
  });

  describe('POST /v1/hooks/{workflow}', () => {
    let service: TestService;
    let workflowId: string;
    let secret: string;
    const post = (v1: string, body = '{}') =>
      request(service.url)
        .post(`/v1/hooks/${workflowId}`)
        .set('Content-Type', 'application/json')
        .set('X-Service-Signature', `t=${Math.floor(Date.now() / 1000)},v1=${v1}`)
        .send(body);
    const right = (body = '{}') =>
      computeSignature(secret, String(Math.floor(Date.now() / 1000)), Buffer.from(body));

    before(async function () {
      this.timeout(120_000);
      service = await sharedService();
      const res = await service
        .api()
        .post(
          '/v1/workflows',
          definition([rulesStep('a', [{ when: 'true', output: 1 }])], { trigger: { type: 'webhook' } }),
        )
        .expect(201);
      workflowId = res.body.id as string;
      secret = res.body.hook_secret as string;
    });

    it('answers 202 to the right signature (the control)', async () => {
      const res = await post(right());
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      await waitForExecution(service.api(), res.body.execution_id as string);
    });

    for (const [what, make] of [
      ['1 byte', () => 'ab'],
      ['31 bytes', () => 'ab'.repeat(31)],
      ['33 bytes', () => 'ab'.repeat(33)],
      ['4000 bytes', () => 'ab'.repeat(4000)],
      ["the right one's first 31 bytes", () => right().slice(0, 62)],
      ['the right one and a byte more', () => `${right()}00`],
      ['an odd number of hex digits', () => right().slice(0, -1)],
    ] as [string, () => string][]) {
      it(`answers 401 invalid_signature to ${what}`, async () => {
        const res = await post(make());
        expectErrorOf(res, 401, ['invalid_signature'], what);
        expect(res.body.error.message).to.match(/No X-Service-Signature v1 value matches/);
      });
    }
  });
});
