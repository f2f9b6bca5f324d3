/** Running the docs' shell examples as scripts (test/integration/tutorial.test.ts, deploy-docs.test.ts). */
import { spawn } from 'node:child_process';

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
