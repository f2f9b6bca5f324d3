/** Mocha root hooks: the shared Temporal dev server is stopped once, after every test. */
import { stopSharedTemporal } from './stack';

export const mochaHooks = {
  async afterAll(this: Mocha.Context) {
    this.timeout(30_000);
    await stopSharedTemporal();
  },
};
