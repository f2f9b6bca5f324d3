import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '../../platform/logger';
import { superviseService } from '../../processes/supervisor';

/**
 * The modules the supervisor process of `npm start` loads (processes/main.ts imports these three), read in
 * a process of their own so that this suite's own imports do not count.
 */
function supervisorModules(): string[] {
  const processes = path.join(__dirname, '..', '..', 'processes');
  const script = `require(${JSON.stringify(path.join(processes, 'embedded-temporal'))});
    require(${JSON.stringify(path.join(processes, 'supervisor'))});
    require(${JSON.stringify(path.join(processes, 'process-lifecycle'))});
    process.stdout.write(JSON.stringify(Object.keys(require.cache)));`;
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' })) as string[];
}

describe('the supervisor of the embedded service process', () => {
  it('starts the service process with the Node options it is given', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sy-supervisor-'));
    const entry = path.join(dir, 'service.js');
    fs.writeFileSync(
      entry,
      `process.stdout.write(JSON.stringify(process.execArgv) + '\\n');
       process.send({ type: 'ready', port: null });
       process.on('SIGTERM', () => process.exit(0));
       setInterval(() => undefined, 1000);`,
    );
    let output = '';
    const supervisor = superviseService({
      entry,
      env: {},
      nodeOptions: ['--max-semi-space-size=4', '--heap-growing-percent=50'],
      logger: createLogger('silent'),
      onOutput: (text) => (output += text),
    });
    try {
      await supervisor.firstReady;
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(JSON.parse(output.trim().split('\n')[0] ?? 'null'), output).to.include.members([
        '--max-semi-space-size=4',
        '--heap-growing-percent=50',
      ]);
    } finally {
      await supervisor.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('stays small: it loads neither the service (API, worker, database) nor a Temporal client', () => {
    const modules = supervisorModules();
    expect(modules.length, 'no module loaded: the probe is broken').to.be.greaterThan(3);
    // Constants only: the paths the banner names.
    const allowed = new Set([path.join(__dirname, '..', '..', 'src', 'http', 'paths.js')]);
    const heavy = modules.filter(
      (file) =>
        !allowed.has(file) &&
        /node_modules\/(koa|@temporalio\/(client|worker|proto)|@electric-sql|pg)\/|\/dist\/(src|workers)\//.test(
          file,
        ),
    );
    expect(heavy, 'modules the supervisor should not load').to.deep.equal([]);
  });
});
