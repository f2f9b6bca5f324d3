import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '../../platform/logger';
import { superviseService } from '../../processes/supervisor';

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
});
