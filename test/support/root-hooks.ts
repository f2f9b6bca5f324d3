/**
 * Mocha root hooks: the shared Temporal dev server is stopped once, after every test; and after each
 * test, the built-in prototypes must be as they were (prototype-watch.ts).
 */
import { prototypeChanges, snapshotPrototypes } from './prototype-watch';
import { stopSharedTemporal } from './stack';

/** Taken once every spec file is loaded: what modules set up when they load is not a finding. */
let prototypes: ReturnType<typeof snapshotPrototypes> | undefined;

export const mochaHooks = {
  beforeAll() {
    prototypes ??= snapshotPrototypes();
  },
  afterEach(this: Mocha.Context) {
    if (!prototypes) return;
    const changes = prototypeChanges(prototypes);
    if (changes.length > 0)
      throw new Error(
        `A built-in prototype of the test process changed during this test: ${changes.join('; ')}`,
      );
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(30_000);
    await stopSharedTemporal();
  },
};
