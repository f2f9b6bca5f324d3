/**
 * The embedded dev server's keeper (processes/dev-server-keeper.ts), over stand-in servers: real child
 * processes (an idle Node) wrapped as the DevServer the keeper receives. The real dev server's case is in
 * test/integration/restart.test.ts.
 */
import { spawn } from 'node:child_process';
import { expect } from 'chai';
import { keepDevServerRunning } from '../../processes/dev-server-keeper';
import type { DevServer } from '../../platform/temporal/dev-server';
import { testLogger } from '../support/stack';
import { waitFor } from '../support/wait';

/** A child process that runs until it is killed, as a DevServer. */
function standIn(): DevServer {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    address: '127.0.0.1:0',
    uiUrl: undefined,
    logFile: '/dev/null',
    process: child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

describe('the dev server keeper of npm start', () => {
  it('starts the server again when it dies, after failed starts with a growing delay', async () => {
    const outcomes: ('started' | 'failed')[] = [];
    let failuresLeft = 0;
    const keeper = await keepDevServerRunning({
      start: async () => {
        if (failuresLeft > 0) {
          failuresLeft -= 1;
          outcomes.push('failed');
          throw new Error('port in use');
        }
        outcomes.push('started');
        return standIn();
      },
      logger: testLogger,
      initialDelayMs: 20,
      maxDelayMs: 80,
    });
    try {
      const first = keeper.current;
      failuresLeft = 2;
      first.process.kill('SIGKILL');
      await waitFor(async () => keeper.restarts === 1, { timeoutMs: 5_000, what: 'a restart' });
      expect(outcomes).to.deep.equal(['started', 'failed', 'failed', 'started']);
      expect(keeper.current).to.not.equal(first);
      expect(keeper.current.process.exitCode).to.equal(null);
    } finally {
      await keeper.stop();
    }
  });

  it('does not start the server again once stopped', async () => {
    let starts = 0;
    const keeper = await keepDevServerRunning({
      start: async () => {
        starts += 1;
        return standIn();
      },
      logger: testLogger,
      initialDelayMs: 10,
    });
    const server = keeper.current;
    await keeper.stop();
    expect(server.process.exitCode !== null || server.process.signalCode !== null).to.equal(true);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect({ starts, restarts: keeper.restarts }).to.deep.equal({ starts: 1, restarts: 0 });
  });
});
