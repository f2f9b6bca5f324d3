import { expect } from 'chai';
import { createSecretCipher } from '../../platform/secrets/cipher';

describe('secret cipher', () => {
  const cipher = createSecretCipher('unit-test-key');

  it('opens what it sealed', () => {
    expect(cipher.open(cipher.seal('hunter2', 'ws/NAME'), 'ws/NAME')).to.equal('hunter2');
  });

  it('refuses a value sealed for another secret (the name is authenticated)', () => {
    expect(() => cipher.open(cipher.seal('hunter2', 'ws/A'), 'ws/B')).to.throw();
  });

  it('refuses a truncated authentication tag', () => {
    const raw = Buffer.from(cipher.seal('hunter2', 'ws/NAME'), 'base64');
    // iv (12) + a 4-byte tag + ciphertext: must not be read as a shorter tag.
    const truncated = Buffer.concat([raw.subarray(0, 16), raw.subarray(28)]).toString('base64');
    expect(() => cipher.open(truncated, 'ws/NAME')).to.throw();
  });

  it('uses a fresh IV for every seal', () => {
    expect(cipher.seal('same', 'ws/N')).not.to.equal(cipher.seal('same', 'ws/N'));
  });
});
