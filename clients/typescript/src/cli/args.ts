/** The CLI's command line: `node:util` parseArgs over every option, then a check per command. */
import { parseArgs } from 'node:util';

/** Exit codes scripts can rely on. */
export const EXIT = {
  ok: 0,
  /** The operation ran and failed: an execution that did not succeed, a wait that ran out. */
  failed: 1,
  /** Bad command line, or a definition file that cannot be read. */
  usage: 2,
  /** The service answered an error (its code and request_id on stderr), or could not be reached. */
  api: 3,
} as const;

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
  json: { type: 'boolean' },
  url: { type: 'string' },
  'api-key': { type: 'string' },
  file: { type: 'string', short: 'f', multiple: true },
  'dry-run': { type: 'boolean' },
  input: { type: 'string' },
  wait: { type: 'boolean' },
  timeout: { type: 'string' },
  'idempotency-key': { type: 'string' },
  'workflow-version': { type: 'string' },
  workflow: { type: 'string' },
  status: { type: 'string' },
  'error-code': { type: 'string' },
  'started-after': { type: 'string' },
  'started-before': { type: 'string' },
  limit: { type: 'string' },
  comment: { type: 'string' },
  data: { type: 'string' },
  id: { type: 'string' },
  name: { type: 'string' },
  note: { type: 'string' },
  start: { type: 'string' },
  end: { type: 'string' },
} as const;

export type OptionName = keyof typeof OPTIONS;
const GLOBAL: readonly OptionName[] = ['help', 'json', 'url', 'api-key'];

export interface Parsed {
  positionals: string[];
  values: {
    help?: boolean;
    version?: boolean;
    json?: boolean;
    url?: string;
    'api-key'?: string;
    file?: string[];
    'dry-run'?: boolean;
    input?: string;
    wait?: boolean;
    timeout?: string;
    'idempotency-key'?: string;
    'workflow-version'?: string;
    workflow?: string;
    status?: string;
    'error-code'?: string;
    'started-after'?: string;
    'started-before'?: string;
    limit?: string;
    comment?: string;
    data?: string;
    id?: string;
    name?: string;
    note?: string;
    start?: string;
    end?: string;
  };
  /** Options given on the command line, to refuse those the command does not take. */
  given: Set<OptionName>;
}

export function parseCommandLine(argv: readonly string[]): Parsed {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      options: OPTIONS,
      allowPositionals: true,
      strict: true,
      tokens: true,
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const given = new Set<OptionName>();
  for (const token of parsed.tokens) if (token.kind === 'option') given.add(token.name);
  return { positionals: parsed.positionals, values: parsed.values, given };
}

/** Refuses options that `command` does not take, and a wrong number of arguments. */
export function expectCommand(
  parsed: Parsed,
  command: string,
  options: readonly OptionName[],
  args: { min: number; max: number; words: number },
): string[] {
  for (const name of parsed.given) {
    if (!GLOBAL.includes(name) && !options.includes(name)) {
      throw new UsageError(`${command} does not take --${name}`);
    }
  }
  const rest = parsed.positionals.slice(args.words);
  if (rest.length < args.min) throw new UsageError(`${command}: missing argument (see --help)`);
  if (rest.length > args.max) throw new UsageError(`${command}: unexpected argument '${rest[args.max]}'`);
  return rest;
}

/** A positive integer option, or undefined when absent. */
export function intOption(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[1-9]\d*$/.test(value)) throw new UsageError(`--${name} must be a positive integer, not '${value}'`);
  return Number(value);
}

/** A JSON object option (`--input '{"plan":"pro"}'`). */
export function jsonObjectOption(
  value: string | undefined,
  name: string,
): Record<string, unknown> | undefined {
  if (value === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch (error) {
    throw new UsageError(`--${name} is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new UsageError(`--${name} must be a JSON object`);
  }
  return parsed as Record<string, unknown>;
}

export const HELP = `Usage: switchyard <command> [options]

Commands:
  login [--url URL] [--api-key KEY]        check the key and save both to the config file
  workflows list [--limit N]               list workflows
  workflows get ID [--workflow-version N]  show a workflow's definition
  workflows versions ID [--limit N]        a workflow's versions, newest first
  workflows queue ID                       executions queued and open under its concurrency, by key
  workflows apply -f FILE|DIR [--dry-run]  create or update workflows from JSON/YAML files
  run WORKFLOW [--input JSON] [--wait] [--timeout SECONDS] [--idempotency-key KEY]
      [--workflow-version N]               start an execution (--wait: until it finishes)
  executions list [--workflow ID] [--status STATUS] [--error-code CODE]
                  [--started-after TIME] [--started-before TIME] [--limit N]
  executions get ID                        an execution and its steps
  executions runs ID STEP [--status STATUS] [--limit N]
                                           the runs of a container step (parallel, map, switch, loop)
  executions retry ID [--input JSON]       retry from the failed step
  executions cancel ID
  executions approve ID STEP [--comment TEXT]
  executions reject ID STEP [--comment TEXT]
  events send NAME [--data JSON] [--id ID] send an event (an id sent again within 24 h acts once)
  events list [--name NAME] [--limit N]    events, newest first
  events show ID                           an event, the executions it started and woke, its errors
  runs show ID                             an execution as a tree: each step, the runs of containers
                                           with their steps, the first 20 runs of each container
  runs cancel [ID...] [FILTER] [--dry-run]
                                           cancel the open executions the filter matches (or the ids)
  runs retry [ID...] [FILTER] [--input JSON] [--dry-run]
                                           retry the failed ones from their failed step
  runs rerun [ID...] [FILTER] [--workflow-version same|latest] [--dry-run]
                                           start each again with the same input; FILTER is
                                           [--workflow ID] [--status STATUS] [--error-code CODE]
                                           [--started-after TIME] [--started-before TIME]; --dry-run
                                           counts them, else the command follows the bulk operation
  schedule show WORKFLOW                   a workflow's schedule: next runs, recent runs, paused or not
  schedule pause WORKFLOW [--note TEXT]    no run at its times until resumed (lasts across versions)
  schedule resume WORKFLOW
  schedule run WORKFLOW                    one run now, with the schedule's input
  schedule backfill WORKFLOW --start TIME --end TIME
                                           the runs of a past window [start, end) (RFC 3339 times)
  webhooks list [--limit N]
  webhooks deliveries ID [--limit N]       deliveries of an endpoint, newest first
  workspace                                the workspace's limits and what it uses of them

Global options:
  --url URL          the service (default: SWITCHYARD_URL, the config file, http://127.0.0.1:3000)
  --api-key KEY      the API key (default: SWITCHYARD_API_KEY, the config file)
  --json             machine-readable output on stdout
  -h, --help         this help

Exit codes: 0 ok, 1 the operation failed (e.g. the execution failed), 2 usage error,
3 API error (code and request_id on stderr).
`;
