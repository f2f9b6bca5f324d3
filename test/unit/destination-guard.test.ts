import { expect } from 'chai';
import {
  checkDestination,
  checkUrlForm,
  DestinationError,
  isNonPublicAddress,
} from '../../platform/net/destination-guard';

describe('destination guard', () => {
  for (const address of [
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '0.0.0.0',
    '::1',
    'fe80::1',
    'fc00::1',
    '::ffff:127.0.0.1',
    '100.64.0.1',
    '224.0.0.1',
  ]) {
    it(`treats ${address} as non-public`, () => expect(isNonPublicAddress(address)).to.equal(true));
  }

  for (const address of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111']) {
    it(`treats ${address} as public`, () => expect(isNonPublicAddress(address)).to.equal(false));
  }

  it('refuses plain http unless private destinations are allowed', () => {
    expect(() => checkUrlForm('http://example.com/x', { allowPrivate: false })).to.throw(
      DestinationError,
      /https/,
    );
    expect(checkUrlForm('http://127.0.0.1:9/x', { allowPrivate: true }).hostname).to.equal('127.0.0.1');
  });

  it('refuses a literal loopback address', () => {
    expect(() => checkUrlForm('https://127.0.0.1/x', { allowPrivate: false })).to.throw(DestinationError);
    expect(() => checkUrlForm('https://[::1]/x', { allowPrivate: false })).to.throw(DestinationError);
  });

  it('refuses URLs carrying credentials', () => {
    expect(() => checkUrlForm('https://user:pw@example.com/', { allowPrivate: false })).to.throw(
      DestinationError,
      /credentials/,
    );
  });

  it('refuses a host name that resolves to loopback', async () => {
    try {
      await checkDestination('https://localhost/x', { allowPrivate: false });
      expect.fail('should have thrown');
    } catch (error) {
      expect(error).to.be.instanceOf(DestinationError);
    }
  });
});
