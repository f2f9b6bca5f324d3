/** What every command group of the CLI works with. */
import type { SwitchyardClient } from '../client';
import type { Parsed } from './args';

export interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
}

/** Prints `value` as JSON with `--json`, else what `human` says. */
export type Print = (value: unknown, human: () => string) => void;

export interface Command {
  parsed: Parsed;
  sub: string | undefined;
  client: () => SwitchyardClient;
  print: Print;
  io: Io;
}
