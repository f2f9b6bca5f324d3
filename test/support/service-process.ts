/** The service as a user runs it: `node dist/processes/main.js` (embedded mode) in a child process. */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import request from 'supertest';
import { projectRoot } from '../../platform/paths';
import { waitFor } from './wait';

const execFileAsync = promisify(execFile);

export class ServiceProcess {
  private child: ChildProcess | undefined;
  output = '';

  constructor(readonly env: Record<string, string>) {}

  get url(): string {
    return `http://127.0.0.1:${this.env['PORT']}`;
  }

  /** Starts the process and waits until /readyz answers 200. */
  async start(timeoutMs = 90_000): Promise<void> {
    const child = spawn(process.execPath, [path.join(projectRoot, 'dist/processes/main.js')], {
      env: { ...process.env, ...this.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    child.stdout.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    const exited = new Promise<never>((_, reject) =>
      child.once('exit', (code) =>
        reject(new Error(`the service exited with ${code}:\n${this.output.slice(-2000)}`)),
      ),
    );
    exited.catch(() => undefined);
    await Promise.race([
      exited,
      waitFor(async () => (await request(this.url).get('/readyz').timeout(2000)).status === 200, {
        timeoutMs,
        intervalMs: 250,
        what: 'the service to be ready',
      }),
    ]);
  }

  /** Sends a signal and waits for the exit code. */
  async stop(signal: NodeJS.Signals = 'SIGINT', timeoutMs = 30_000): Promise<number | null> {
    const child = this.child;
    if (!child || child.exitCode !== null) return child?.exitCode ?? null;
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    const code = await exited;
    clearTimeout(timer);
    return code;
  }

  /** Runs `npm run admin -- ...` (its compiled script) with this service's environment. */
  async admin(...args: string[]): Promise<string> {
    const { stdout } = await execFileAsync(
      process.execPath,
      [path.join(projectRoot, 'dist/processes/admin.js'), ...args],
      {
        env: { ...process.env, ...this.env },
      },
    );
    return stdout;
  }
}

export function keyFromAdminOutput(stdout: string): string {
  const key = /API key \(shown once\): (sk_\S+)/.exec(stdout)?.[1];
  if (!key) throw new Error(`no key in admin output: ${stdout}`);
  return key;
}
