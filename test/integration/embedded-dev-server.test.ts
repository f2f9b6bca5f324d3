import { expect } from 'chai';
import fs from 'node:fs';
import { freePort } from '../support/ports';
import { sharedTemporal, tempDir, testLogger } from '../support/stack';
import { loadConfig } from '../../platform/config';
import { startEmbeddedTemporal } from '../../processes/embedded-temporal';

/** The dev server's environment as its process sees it (Linux /proc). */
function environmentOf(pid: number): Map<string, string> {
  const entries = fs
    .readFileSync(`/proc/${pid}/environ`, 'utf8')
    .split('\0')
    .filter(Boolean)
    .map((line): [string, string] => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]);
  return new Map(entries);
}

describe("the embedded setup's Temporal dev server (npm start)", () => {
  const started = async (env: Record<string, string>) => {
    const dataDir = tempDir('sy-embedded-temporal-');
    const config = loadConfig({
      DATA_DIR: dataDir,
      TEMPORAL_CLI_PATH: (await sharedTemporal()).cliPath,
      TEMPORAL_DEV_PORT: String(await freePort()),
      TEMPORAL_UI_PORT: '0',
      ...env,
    });
    const devServer = await startEmbeddedTemporal(config, testLogger);
    return {
      environment: environmentOf(devServer.process.pid!),
      stop: async () => {
        await devServer.stop();
        fs.rmSync(dataDir, { recursive: true, force: true });
      },
    };
  };

  it('runs with a Go memory limit of 300 MiB by default, so its heap does not double under load', async () => {
    const server = await started({});
    try {
      expect(server.environment.get('GOMEMLIMIT')).to.equal('300MiB');
    } finally {
      await server.stop();
    }
  });

  it('takes another limit from TEMPORAL_DEV_MEMORY_LIMIT_MB, and none with 0', async () => {
    const limited = await started({ TEMPORAL_DEV_MEMORY_LIMIT_MB: '512' });
    try {
      expect(limited.environment.get('GOMEMLIMIT')).to.equal('512MiB');
    } finally {
      await limited.stop();
    }
    const unlimited = await started({ TEMPORAL_DEV_MEMORY_LIMIT_MB: '0' });
    try {
      expect(unlimited.environment.get('GOMEMLIMIT')).to.equal(process.env['GOMEMLIMIT']);
    } finally {
      await unlimited.stop();
    }
  });
});
