/**
 * The hand-written parts of @switchyard/client that need no service: the inbound signature (checked by
 * the service's own verifier), retries honouring Retry-After, the error class, cursor iteration, and the
 * list of execution statuses.
 */
import { expect } from 'chai';
import {
  EXECUTION_STATUSES,
  PageIterator,
  SwitchyardError,
  hookSignatureHeader,
  parseRetryAfter,
  retryingFetch,
  signHookRequest,
} from '@switchyard/client';
import { EXECUTION_STATUSES as API_EXECUTION_STATUSES } from '../../src/executions/views';
import { verifySignature } from '../../src/inbound-hooks/signature';

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

describe('@switchyard/client (unit)', () => {
  describe('inbound hook signatures', () => {
    const secret = 'whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0';
    const now = 1_800_000_000;

    it("signs so that the service's verifier accepts it", () => {
      const { body, headers } = signHookRequest(secret, { customer: 'Ada', plan: 'pro' }, { timestamp: now });
      const result = verifySignature({
        header: headers['X-Service-Signature'],
        rawBody: Buffer.from(body),
        secrets: [secret],
        now,
      });
      expect(result).to.deep.equal({ ok: true, index: 0, timestamp: String(now) });
    });

    it('sends one v1 per secret while a secret rolls, and any of them matches', () => {
      const header = hookSignatureHeader(['whsec_old', secret], '{"a":1}', now);
      expect(header.split(',')).to.have.length(3);
      const result = verifySignature({ header, rawBody: Buffer.from('{"a":1}'), secrets: [secret], now });
      expect(result.ok).to.equal(true);
    });

    it('signs the raw bytes: another body does not verify', () => {
      const header = hookSignatureHeader(secret, '{"a":1}', now);
      const result = verifySignature({ header, rawBody: Buffer.from('{"a": 1}'), secrets: [secret], now });
      expect(result).to.deep.equal({ ok: false, reason: 'mismatch' });
    });
  });

  describe('retries', () => {
    it('retries 429 and 503 after the Retry-After the service gave, then returns the answer', async () => {
      const answers = [
        json(429, { error: { code: 'rate_limited' } }, { 'retry-after': '2' }),
        json(503, {}),
        json(200, { ok: true }),
      ];
      const waits: number[] = [];
      const bodies: string[] = [];
      const fetch = retryingFetch(
        async (request) => {
          bodies.push(await request.text());
          return answers.shift()!;
        },
        { maxRetries: 3, baseDelayMs: 100 },
        async (ms) => void waits.push(ms),
      );
      const response = await fetch(
        new Request('http://x/v1/workflows', { method: 'POST', body: '{"id":"a"}' }),
      );
      expect(response.status).to.equal(200);
      expect(bodies, 'every attempt sends the whole body').to.deep.equal(Array(3).fill('{"id":"a"}'));
      expect(waits[0]).to.equal(2000);
      expect(waits[1], 'backoff 2 × 100 ms, with jitter').to.be.within(100, 200);
    });

    it('gives up after maxRetries, and at once when Retry-After is longer than maxDelayMs', async () => {
      let calls = 0;
      const always429 = (retryAfter: string) =>
        retryingFetch(
          async () => {
            calls += 1;
            return json(429, {}, { 'retry-after': retryAfter });
          },
          { maxRetries: 2, maxDelayMs: 5_000 },
          async () => undefined,
        );
      expect((await always429('1')(new Request('http://x/'))).status).to.equal(429);
      expect(calls).to.equal(3);
      calls = 0;
      expect((await always429('60')(new Request('http://x/'))).status).to.equal(429);
      expect(calls).to.equal(1);
    });

    it('reads Retry-After as seconds or as an HTTP date', () => {
      expect(parseRetryAfter('3')).to.equal(3);
      expect(parseRetryAfter(new Date(10_000).toUTCString(), 0)).to.equal(10);
      expect(parseRetryAfter('soon')).to.equal(undefined);
      expect(parseRetryAfter(null)).to.equal(undefined);
    });
  });

  describe('SwitchyardError', () => {
    it("carries the error body's code, message, request_id and details, and the status", () => {
      const body = {
        error: {
          code: 'invalid_input',
          message: 'bad',
          request_id: 'req_1',
          details: [{ path: '/plan', message: 'required' }],
        },
      };
      const error = SwitchyardError.fromResponse(json(400, body), body);
      expect(error).to.be.instanceOf(Error);
      expect([error.status, error.code, error.message, error.requestId, error.request_id]).to.deep.equal([
        400,
        'invalid_input',
        'bad',
        'req_1',
        'req_1',
      ]);
      expect(error.details).to.deep.equal([{ path: '/plan', message: 'required' }]);
    });

    it('still describes an answer without the error body', () => {
      const response = new Response('', { status: 431, headers: { 'x-request-id': 'req_2' } });
      const error = SwitchyardError.fromResponse(response, '');
      expect([error.status, error.code, error.requestId]).to.deep.equal([431, 'http_431', 'req_2']);
    });
  });

  describe('PageIterator', () => {
    it('follows next_cursor until it is null, one page at a time', async () => {
      const cursors: (string | undefined)[] = [];
      const pages = new PageIterator<number>(async (cursor) => {
        cursors.push(cursor);
        const n = cursor === undefined ? 0 : Number(cursor);
        return { data: [n * 2, n * 2 + 1], next_cursor: n < 2 ? String(n + 1) : null };
      });
      const items: number[] = [];
      for await (const item of pages) items.push(item);
      expect(items).to.deep.equal([0, 1, 2, 3, 4, 5]);
      expect(cursors).to.deep.equal([undefined, '1', '2']);
      expect(await pages.toArray(3)).to.deep.equal([0, 1, 2]);
    });
  });

  describe('EXECUTION_STATUSES', () => {
    // The compiler checks it holds the generated type's statuses; the console's filter shows them in order.
    it("lists the API's execution statuses in the API's order", () => {
      expect(EXECUTION_STATUSES).to.deep.equal(API_EXECUTION_STATUSES);
    });
  });
});
