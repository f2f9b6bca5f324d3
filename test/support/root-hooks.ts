/**
 * Mocha root hooks: the shared Temporal dev server is stopped once, after every test, and the security
 * suites' shared service after them; and after each test, the built-in prototypes must be as they were
 * (prototype-watch.ts).
 *
 * The suite runs its files in parallel processes (.mocharc.json `parallel`): there root hooks run once
 * per file, and each worker process keeps its dev server from file to file. The server goes when the
 * process does (platform/temporal/dev-server.ts ties it to its parent), so a worker never stops it itself.
 */
import { prototypeChanges, snapshotPrototypes } from './prototype-watch';
import { stopSharedService } from '../security/support';
import { stopSharedTemporal } from './stack';

/** Mocha sets this in the worker processes of a parallel run. */
const IN_PARALLEL_WORKER = process.env['MOCHA_WORKER_ID'] !== undefined;

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
    this.timeout(60_000);
    await stopSharedService();
    if (IN_PARALLEL_WORKER) return;
    await stopSharedTemporal();
  },
};
