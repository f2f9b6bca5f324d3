/** docs/webhooks.md#signing-a-request: parsing and verifying X-Service-Signature. */
import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import {
  computeSignature,
  constantTimeEqual,
  parseSignatureHeader,
  replayKey,
  signatureHeader,
  verifySignature,
} from '../../src/inbound-hooks/signature';

const SECRET = 'whsec_dGVzdC1zZWNyZXQtdGVzdC1zZWNyZXQtMTIz';
const OTHER = 'whsec_b3RoZXItc2VjcmV0LW90aGVyLXNlY3JldC00NTY=';
const NOW = 1_700_000_000;
const body = Buffer.from('{"customer":"Ada","plan":"pro"}');
const sig = (secret = SECRET, t = NOW, raw = body) => computeSignature(secret, String(t), raw);
const verify = (header: string | undefined, options: { secrets?: string[]; raw?: Buffer } = {}) =>
  verifySignature({ header, rawBody: options.raw ?? body, secrets: options.secrets ?? [SECRET], now: NOW });

describe('hook signature', () => {
  describe('parseSignatureHeader', () => {
    it('reads t and one v1', () => {
      const parsed = parseSignatureHeader(`t=${NOW},v1=${sig()}`);
      expect(parsed?.timestamp).to.equal(String(NOW));
      expect(parsed?.signatures.map((s) => s.toString('hex'))).to.deep.equal([sig()]);
    });

    it('accepts any order, spaces around parts and upper-case hex', () => {
      const parsed = parseSignatureHeader(` v1=${sig().toUpperCase()} , t=${NOW} `);
      expect(parsed?.timestamp).to.equal(String(NOW));
      expect(parsed?.signatures[0]?.toString('hex')).to.equal(sig());
    });

    it('keeps every v1 value and ignores unknown schemes', () => {
      const parsed = parseSignatureHeader(`t=${NOW},v0=abc,v1=${'00'.repeat(32)},v1=${sig()}`);
      expect(parsed?.signatures).to.have.length(2);
    });

    it('drops v1 values that are not hex, so they can match nothing', () => {
      expect(parseSignatureHeader(`t=${NOW},v1=xyz,v1=abc`)?.signatures).to.deep.equal([]);
    });

    for (const [what, header] of [
      ['missing', undefined],
      ['empty', ''],
      ['without t', `v1=${'ab'.repeat(32)}`],
      ['without v1', `t=${NOW}`],
      ['with two t', `t=${NOW},t=${NOW},v1=ab`],
      ['with a non-numeric t', `t=12a,v1=ab`],
      ['with a negative t', `t=-5,v1=ab`],
      ['with a part without =', `t=${NOW},v1`],
      ['in another format', `sha256=${'ab'.repeat(32)}`],
      ['too long', `t=${NOW},${'v1=ab,'.repeat(2000)}v1=ab`],
    ] as const) {
      it(`rejects a header ${what}`, () => {
        expect(parseSignatureHeader(header)).to.equal(undefined);
      });
    }
  });

  describe('computeSignature', () => {
    it('is the hex HMAC-SHA256 of "<t>.<raw body>" keyed with the whole secret as UTF-8', () => {
      const expected = createHmac('sha256', Buffer.from(SECRET, 'utf8'))
        .update(`${NOW}.${body.toString('utf8')}`)
        .digest('hex');
      expect(sig()).to.equal(expected);
      expect(signatureHeader(SECRET, body, NOW)).to.equal(`t=${NOW},v1=${expected}`);
    });
  });

  describe('verifySignature', () => {
    it('accepts a valid signature', () => {
      expect(verify(`t=${NOW},v1=${sig()}`)).to.deep.equal({ ok: true, index: 0, timestamp: String(NOW) });
    });

    it('accepts when any of several v1 values matches', () => {
      expect(verify(`t=${NOW},v1=${sig(OTHER)},v1=${sig()}`).ok).to.equal(true);
    });

    it('names the candidate secret that matched', () => {
      expect(verify(`t=${NOW},v1=${sig()}`, { secrets: [OTHER, SECRET] })).to.include({ ok: true, index: 1 });
    });

    it('rejects a signature made with another secret', () => {
      expect(verify(`t=${NOW},v1=${sig(OTHER)}`)).to.deep.equal({ ok: false, reason: 'mismatch' });
    });

    it('rejects a tampered body', () => {
      const tampered = Buffer.from('{"customer":"Ada","plan":"enterprise"}');
      expect(verify(`t=${NOW},v1=${sig()}`, { raw: tampered })).to.deep.equal({
        ok: false,
        reason: 'mismatch',
      });
    });

    it('rejects a body that differs only in whitespace (bytes are signed, not JSON)', () => {
      const spaced = Buffer.from('{"customer": "Ada", "plan": "pro"}');
      expect(verify(`t=${NOW},v1=${sig()}`, { raw: spaced }).ok).to.equal(false);
    });

    it('rejects a signature whose t was changed', () => {
      expect(verify(`t=${NOW + 1},v1=${sig()}`)).to.deep.equal({ ok: false, reason: 'mismatch' });
    });

    it('rejects a truncated signature or one of another length without throwing', () => {
      expect(verify(`t=${NOW},v1=${sig().slice(0, 62)}`).ok).to.equal(false);
      expect(verify(`t=${NOW},v1=${sig()}00`).ok).to.equal(false);
    });

    it('accepts timestamps up to 300 s old or ahead, and not 301 s', () => {
      for (const t of [NOW - 300, NOW + 300]) expect(verify(`t=${t},v1=${sig(SECRET, t)}`).ok).to.equal(true);
      for (const t of [NOW - 301, NOW + 301]) {
        expect(verify(`t=${t},v1=${sig(SECRET, t)}`)).to.deep.equal({ ok: false, reason: 'stale' });
      }
    });

    it('tells a missing header from a malformed one', () => {
      expect(verify(undefined)).to.deep.equal({ ok: false, reason: 'missing' });
      expect(verify('')).to.deep.equal({ ok: false, reason: 'missing' });
      expect(verify('garbage')).to.deep.equal({ ok: false, reason: 'malformed' });
    });

    it('signs the empty body as "<t>."', () => {
      const empty = Buffer.alloc(0);
      expect(verify(`t=${NOW},v1=${sig(SECRET, NOW, empty)}`, { raw: empty }).ok).to.equal(true);
    });

    it('matches nothing without candidate secrets', () => {
      expect(verify(`t=${NOW},v1=${sig()}`, { secrets: [] }).ok).to.equal(false);
    });
  });

  describe('constantTimeEqual', () => {
    it('compares bytes', () => {
      expect(constantTimeEqual(Buffer.from('abc'), Buffer.from('abc'))).to.equal(true);
      expect(constantTimeEqual(Buffer.from('abc'), Buffer.from('abd'))).to.equal(false);
    });

    it('answers false for different lengths instead of throwing', () => {
      expect(constantTimeEqual(Buffer.from('abc'), Buffer.from('abcd'))).to.equal(false);
      expect(constantTimeEqual(Buffer.alloc(32), Buffer.alloc(0))).to.equal(false);
    });
  });

  describe('replayKey', () => {
    it('is the same for the same signed content and differs otherwise', () => {
      expect(replayKey('1', body)).to.equal(replayKey('1', Buffer.from(body)));
      expect(replayKey('1', body)).not.to.equal(replayKey('2', body));
      expect(replayKey('1', body)).to.match(/^hook:[0-9a-f]{64}$/);
    });
  });
});
