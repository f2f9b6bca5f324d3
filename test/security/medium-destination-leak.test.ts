/**
 * The destination guard's refusals reach the workspace (step errors, delivery attempts,
 * 400 invalid_webhook_url). For a name that resolves to a private address they say so without the
 * address: which internal address a name maps to is the operator's network map, not the tenant's.
 */
import dns from 'node:dns';
import { expect } from 'chai';
import { checkDestination, DestinationError, guardedLookup } from '../../platform/net/destination-guard';

const NAME = 'internal.leak.test';
const PRIVATE = '10.0.0.5';

describe('security (medium): destination guard refusals do not reveal resolved addresses', () => {
  let restore: () => void;
  before(() => {
    // A name that resolves to 10.0.0.5, both for the up-front check and at connect time.
    const original = { lookup: dns.lookup, promisesLookup: dns.promises.lookup };
    const answer = [{ address: PRIVATE, family: 4 }];
    Object.assign(dns, {
      lookup: (hostname: string, options: unknown, callback?: (...args: unknown[]) => void) =>
        hostname === NAME
          ? setImmediate(() => callback!(null, answer))
          : (original.lookup as (...args: unknown[]) => void)(hostname, options, callback),
    });
    Object.assign(dns.promises, {
      lookup: async (hostname: string, options?: dns.LookupAllOptions) =>
        hostname === NAME ? answer : original.promisesLookup(hostname, options ?? {}),
    });
    restore = () => {
      Object.assign(dns, { lookup: original.lookup });
      Object.assign(dns.promises, { lookup: original.promisesLookup });
    };
  });
  after(() => restore?.());

  it('refuses a name resolving to 10.0.0.5 (checked and at connect) saying "non-public address", not the address', async () => {
    const messages: string[] = [];
    try {
      await checkDestination(`https://${NAME}/x`, { allowPrivate: false });
      expect.fail('checkDestination should have refused the name');
    } catch (error) {
      expect(error).to.be.instanceOf(DestinationError);
      messages.push((error as Error).message);
    }
    const lookup = guardedLookup({ allowPrivate: false });
    messages.push(
      await new Promise<string>((resolve) =>
        lookup(NAME, { all: true }, (error) => resolve(error?.message ?? 'no error')),
      ),
    );
    for (const message of messages) {
      expect(message, 'the refusal').to.equal(`${NAME} resolves to a non-public address`);
      expect(message, 'the refusal must not name the address').not.to.include(PRIVATE);
    }
  });
});
