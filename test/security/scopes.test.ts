/**
 * OWASP API5, broken function level authorization (docs/api.md#authentication-and-scopes), for every
 * operation of the OpenAPI document: the scope it declares is the contract's (read: GETs; admin: API keys;
 * write: every other change), a key without that scope gets 403 `forbidden`, a key with it gets through, and
 * a request without a key gets 401 `unauthorized`. Only health, the document and signed inbound hooks are
 * open.
 */
import { expect } from 'chai';
import type { Scope } from '../../platform/store/api-keys';
import type { TestService } from '../support/stack';
import { API, authenticated, expectErrorOf, send, sharedService } from './support';

const RANK: Record<Scope, number> = { read: 1, write: 2, admin: 3 };
const SCOPES: Scope[] = ['read', 'write', 'admin'];

/** The operations that need no API key, by operationId. */
const UNAUTHENTICATED = ['healthz', 'readyz', 'getOpenApiDocument', 'triggerHook'];

describe('security: function level authorization (scopes) @integration', function () {
  let service: TestService;
  const keys = {} as Record<Scope, string>;
  before(async function () {
    this.timeout(120_000);
    service = await sharedService();
    const { workspaceId } = await service.newWorkspace(['admin']);
    for (const scope of SCOPES) keys[scope] = await service.newKey(workspaceId, [scope]);
  });

  describe('the OpenAPI document', () => {
    it('is the document these suites iterate', async () => {
      const res = await send(
        service.url,
        API.operations.find((op) => op.operationId === 'getOpenApiDocument')!,
      );
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal(API.document);
    });

    it('leaves only health, the document itself and signed inbound hooks without authentication', () => {
      expect(
        API.operations
          .filter((op) => op.scope === 'none')
          .map((op) => op.operationId)
          .sort(),
      ).to.deep.equal([...UNAUTHENTICATED].sort());
    });

    for (const op of authenticated(API.operations)) {
      const expected: Scope = op.path.startsWith('/v1/api-keys')
        ? 'admin'
        : op.method === 'get'
          ? 'read'
          : 'write';
      it(`${op.label} requires the '${expected}' scope`, () => {
        expect(op.scope).to.equal(expected);
      });
    }
  });

  for (const op of authenticated(API.operations)) {
    describe(op.label, () => {
      for (const scope of SCOPES.filter((s) => RANK[s] < RANK[op.scope as Scope])) {
        it(`answers 403 forbidden to a '${scope}' key`, async () => {
          const res = await send(service.url, op, { key: keys[scope] });
          expectErrorOf(res, 403, ['forbidden'], op.label);
          expect(res.body.error.message).to.include(`'${op.scope}'`);
        });
      }

      it(`lets a '${op.scope}' key through`, async () => {
        const res = await send(service.url, op, { key: keys[op.scope as Scope] });
        expect(res.status, JSON.stringify(res.body)).not.to.be.oneOf([401, 403]);
        expect(res.status, JSON.stringify(res.body)).to.be.below(500);
      });

      it('answers 401 unauthorized without a key', async () => {
        const res = await send(service.url, op);
        expectErrorOf(res, 401, ['unauthorized'], op.label);
        expect(res.headers['www-authenticate']).to.equal('Bearer');
      });
    });
  }
});
