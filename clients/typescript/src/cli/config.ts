/**
 * Where the CLI finds the service and its key: flags (`--url`, `--api-key`) first, then the environment
 * (`SWITCHYARD_URL`, `SWITCHYARD_API_KEY`), then the file `switchyard login` writes
 * (`$XDG_CONFIG_HOME/switchyard/config.json`, else `~/.config/switchyard/config.json`; mode 0600).
 */
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

export interface CliConfig {
  url?: string;
  api_key?: string;
}

export const DEFAULT_URL = 'http://127.0.0.1:3000';

export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  const base = env['XDG_CONFIG_HOME'] || join(homedir(), '.config');
  return join(base, 'switchyard', 'config.json');
}

export function readConfig(path = configPath()): CliConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return {};
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null) return {};
    const { url, api_key } = parsed as Record<string, unknown>;
    return {
      ...(typeof url === 'string' ? { url } : {}),
      ...(typeof api_key === 'string' ? { api_key } : {}),
    };
  } catch {
    throw new Error(`${path} is not valid JSON: run \`switchyard login\` again.`);
  }
}

/** Writes the file readable by its owner only (the folder too). */
export function writeConfig(config: CliConfig, path = configPath()): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeFileSync(path, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
}

export interface Connection {
  url: string;
  apiKey: string | undefined;
}

export function resolveConnection(
  flags: { url?: string | undefined; 'api-key'?: string | undefined },
  env: NodeJS.ProcessEnv = process.env,
): Connection {
  const file = readConfig(configPath(env));
  return {
    url: flags.url || env['SWITCHYARD_URL'] || file.url || DEFAULT_URL,
    apiKey: flags['api-key'] || env['SWITCHYARD_API_KEY'] || file.api_key,
  };
}
