/**
 * A SECRETS_KEY printed in this repository (docker-compose.yml's former default, the
 * docs' `SECRETS_KEY=...`) is public; the configuration refuses it at start with an error naming the
 * variable, instead of encrypting every workspace's secrets with a key anyone can read.
 */
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../platform/config';

/** The values this repository has printed as SECRETS_KEY. */
const PLACEHOLDERS = ['insecure-placeholder-set-SECRETS_KEY', '...'];

describe('security (medium): placeholder SECRETS_KEY', () => {
  it("refuses docker-compose's former placeholder SECRETS_KEY at start with a config error", () => {
    for (const placeholder of PLACEHOLDERS) {
      expect(() => loadConfig({ SECRETS_KEY: placeholder }), placeholder)
        .to.throw(ConfigError)
        .with.property('message')
        .that.matches(/SECRETS_KEY: is a placeholder/);
    }
    // A real key is accepted.
    expect(loadConfig({ SECRETS_KEY: 'q2s0Zr3lA3c4GmXb8PzE1f6h9Jk2LmNo' }).secretsKey).to.be.a('string');
  });
});
