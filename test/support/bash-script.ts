/** Running the docs' shell examples as scripts (test/integration/tutorial.test.ts, deploy-docs.test.ts). */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { projectRoot } from '../../platform/paths';
import { fencedBlocks } from './markdown';

export interface BashResult {
  code: number | null;
  /** Standard output and error, as they came. */
  output: string;
}

/**
 * Runs a bash script in a process group of its own, so that what it leaves running in the background (a
 * receiver, a server) is ended with it; stops it after `timeoutMs`.
 */
export function runBash(
  file: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<BashResult> {
  return new Promise((resolve) => {
    const child = spawn('bash', [file], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk: Buffer) => (output += chunk.toString());
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const killGroup = () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // Already gone.
      }
    };
    const timer = setTimeout(() => {
      output += `\n(the script ran past ${timeoutMs} ms and was stopped)\n`;
      killGroup();
    }, timeoutMs);
    // 'exit', not 'close': a process left in the background keeps the pipes open.
    child.once('exit', (code) => {
      clearTimeout(timer);
      killGroup();
      resolve({ code, output });
    });
  });
}

/**
 * Runs a docs example as a reader who set up the tutorial's second terminal would: in bash with `set -euo
 * pipefail`, the tutorial's helpers (`json`, `wait_for`) and `AUTH`, against the service at `url` with `key`.
 */
export async function runWithTutorialHelpers(
  example: string,
  service: { url: string; key: string },
  timeoutMs = 90_000,
): Promise<BashResult> {
  const helpers = fencedBlocks(fs.readFileSync(path.join(projectRoot, 'docs/tutorial.md'), 'utf8')).filter(
    (block) => block.lang === 'bash' && block.code.includes('wait_for() {'),
  );
  if (helpers.length !== 1)
    throw new Error(`expected one block of docs/tutorial.md to define wait_for, found ${helpers.length}`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sy-docs-example-'));
  const script = path.join(dir, 'example.sh');
  fs.writeFileSync(
    script,
    ['set -euo pipefail', helpers[0]!.code, 'AUTH="Authorization: Bearer $SWITCHYARD_API_KEY"', example].join(
      '\n',
    ),
  );
  return runBash(
    script,
    dir,
    { PATH: process.env['PATH'], SWITCHYARD_URL: service.url, SWITCHYARD_API_KEY: service.key },
    timeoutMs,
  );
}
