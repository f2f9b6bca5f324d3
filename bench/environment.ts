/** Where the numbers were measured: they mean little without the machine and the versions. */
import { execFile } from 'node:child_process';
import os from 'node:os';
import { promisify } from 'node:util';
import { projectRoot, projectVersion } from '../platform/paths';
/** What the environment says of the stack the scenarios ran against. */
export interface StackDescription {
  cliPath: string;
  database?: string;
  eagerStart?: boolean;
}

const run = promisify(execFile);

async function firstLineOf(command: string, args: string[]): Promise<string | null> {
  try {
    const { stdout } = await run(command, args, { cwd: projectRoot, timeout: 20_000 });
    return stdout.trim().split('\n')[0] ?? null;
  } catch {
    return null;
  }
}

/** `loadBefore`: os.loadavg() before the stack started; other work on the machine skews every number. */
export async function describeEnvironment(stack: StackDescription, loadBefore: number[]) {
  const cpus = os.cpus();
  return {
    date: new Date().toISOString(),
    switchyard_version: projectVersion,
    git_commit: await firstLineOf('git', ['rev-parse', '--short', 'HEAD']),
    node: process.version,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    cpu_model: cpus[0]?.model.trim() ?? null,
    cpu_count: cpus.length,
    total_memory_mb: Math.round(os.totalmem() / 2 ** 20),
    load_average_before: loadBefore.map((value) => Math.round(value * 100) / 100),
    temporal_cli: await firstLineOf(stack.cliPath, ['--version']),
    database: stack.database ?? null,
    /** The worker shares the API's connection, so starts hand back the first workflow task. */
    eager_start: stack.eagerStart ?? null,
  };
}
