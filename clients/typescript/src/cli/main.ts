#!/usr/bin/env node
/**
 * `switchyard`: the command line of the Switchyard API, on top of @switchyard/client. Human output by
 * default, `--json` for scripts; exit codes in args.ts (EXIT). See the package README
 * (README.md#command-line) and docs/client.md.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline/promises';
import {
  SwitchyardClient,
  type Event,
  type Execution,
  type ExecutionStatus,
  type StepRunStatus,
  type Workspace,
} from '../client';
import { ExecutionWaitTimeoutError, SwitchyardError } from '../errors';
import {
  applyDefinition,
  DefinitionFileError,
  definitionFiles,
  readDefinition,
  type ApplyOutcome,
} from './apply';
import {
  EXIT,
  expectCommand,
  HELP,
  intOption,
  jsonObjectOption,
  parseCommandLine,
  UsageError,
  type Parsed,
} from './args';
import type { Command, Io, Print } from './command';
import { configPath, resolveConnection, writeConfig } from './config';
import { formatDuration, stepStatus, table } from './output';
import { stepTree } from './tree';
import { schedule } from './schedule';
import { bulkRuns } from './bulk';

const STATUSES = ['queued', 'running', 'waiting', 'success', 'failed', 'canceled', 'terminated', 'timed_out'];

export async function main(argv: readonly string[], io: Io = defaultIo()): Promise<number> {
  let json = argv.includes('--json');
  try {
    const parsed = parseCommandLine(argv);
    json = parsed.values.json ?? false;
    if (parsed.values.version) {
      io.stdout(`${packageVersion()}\n`);
      return EXIT.ok;
    }
    if (parsed.values.help || parsed.positionals.length === 0) {
      (parsed.positionals.length === 0 && !parsed.values.help ? io.stderr : io.stdout)(HELP);
      return parsed.values.help ? EXIT.ok : EXIT.usage;
    }
    return await dispatch(parsed, io);
  } catch (error) {
    return report(error, json, io);
  }
}

function report(error: unknown, json: boolean, io: Io): number {
  if (error instanceof UsageError || error instanceof DefinitionFileError) {
    io.stderr(
      `error: ${error.message}\n${error instanceof UsageError ? 'Run `switchyard --help` for usage.\n' : ''}`,
    );
    return EXIT.usage;
  }
  if (error instanceof SwitchyardError) {
    if (json) {
      const body = {
        code: error.code,
        message: error.message,
        request_id: error.requestId ?? null,
        details: error.details,
      };
      io.stderr(`${JSON.stringify({ error: { status: error.status, ...body } })}\n`);
    } else {
      io.stderr(`error: ${error.code}: ${error.message}\n`);
      for (const detail of error.details) io.stderr(`  ${detail.path || '/'}: ${detail.message}\n`);
      io.stderr(`  (HTTP ${error.status}, request_id ${error.requestId ?? 'none'})\n`);
    }
    return EXIT.api;
  }
  if (error instanceof ExecutionWaitTimeoutError) {
    io.stderr(`error: ${error.message}\n`);
    return EXIT.failed;
  }
  // fetch failed: the service could not be reached.
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const message = cause?.message ?? (error as Error).message ?? String(error);
  if (json)
    io.stderr(`${JSON.stringify({ error: { code: 'connection_failed', message, request_id: null } })}\n`);
  else io.stderr(`error: connection_failed: ${message}\n`);
  return EXIT.api;
}

async function dispatch(parsed: Parsed, io: Io): Promise<number> {
  const [command, sub] = parsed.positionals;
  const v = parsed.values;
  const json = v.json ?? false;
  const print = (value: unknown, human: () => string): void =>
    io.stdout(json ? `${JSON.stringify(value, null, 2)}\n` : `${human()}\n`);
  const connection = resolveConnection(v, io.env);
  const client = (): SwitchyardClient => {
    if (!connection.apiKey) {
      throw new UsageError('no API key: run `switchyard login`, set SWITCHYARD_API_KEY, or pass --api-key');
    }
    return new SwitchyardClient({ baseUrl: connection.url, apiKey: connection.apiKey });
  };

  switch (command) {
    case 'login': {
      expectCommand(parsed, 'login', [], { min: 0, max: 0, words: 1 });
      const apiKey = v['api-key'] || io.env['SWITCHYARD_API_KEY'] || (await readKey());
      if (!apiKey) throw new UsageError('login needs an API key (--api-key, SWITCHYARD_API_KEY, or stdin)');
      const checked = new SwitchyardClient({ baseUrl: connection.url, apiKey });
      await checked.workflows.list({ limit: 1 }).pages().next(); // 401 when the key is wrong
      const path = configPath(io.env);
      writeConfig({ url: connection.url, api_key: apiKey }, path);
      print(
        { url: connection.url, config: path },
        () => `Logged in to ${connection.url} (saved to ${path}).`,
      );
      return EXIT.ok;
    }
    case 'workflows':
      return workflows({ parsed, sub, client, print, io });
    case 'run': {
      const [workflow] = expectCommand(
        parsed,
        'run',
        ['input', 'wait', 'timeout', 'idempotency-key', 'workflow-version'],
        { min: 1, max: 1, words: 1 },
      );
      const input = jsonObjectOption(v.input, 'input') ?? {};
      const timeout = intOption(v.timeout, 'timeout') ?? 300;
      const version = intOption(v['workflow-version'], 'workflow-version');
      const api = client();
      const accepted = await api.workflows.trigger(workflow!, input, {
        ...(v['idempotency-key'] ? { idempotencyKey: v['idempotency-key'] } : {}),
        ...(version !== undefined ? { version } : {}),
      });
      if (!v.wait) {
        print(accepted, () => `Started ${accepted.execution_id}`);
        return EXIT.ok;
      }
      if (!json) io.stderr(`Started ${accepted.execution_id}, waiting...\n`);
      const execution = await api.waitForExecution(accepted.execution_id, { timeoutMs: timeout * 1000 });
      print(execution, () => describeExecution(execution));
      return execution.status === 'success' ? EXIT.ok : EXIT.failed;
    }
    case 'executions':
      return executions({ parsed, sub, client, print, io });
    case 'events':
      return events({ parsed, sub, client, print, io });
    case 'runs':
      return runs({ parsed, sub, client, print, io });
    case 'webhooks':
      return webhooks({ parsed, sub, client, print, io });
    case 'schedule':
      return schedule({ parsed, sub, client, print, io });
    case 'workspace': {
      expectCommand(parsed, 'workspace', [], { min: 0, max: 0, words: 1 });
      const workspace = await client().workspace.get();
      print(workspace, () => describeWorkspace(workspace));
      return EXIT.ok;
    }
    default:
      throw new UsageError(`unknown command '${command}'`);
  }
}

/** A list as a table (or a sentence when empty); `--json` prints the array. */
function printList<T>(
  print: Print,
  items: readonly T[],
  empty: string,
  headers: readonly string[],
  row: (item: T) => unknown[],
): void {
  print(items, () => (items.length === 0 ? empty : table(headers, items.map(row))));
}

async function workflows({ parsed, sub, client, print, io }: Command): Promise<number> {
  const v = parsed.values;
  switch (sub) {
    case 'list': {
      expectCommand(parsed, 'workflows list', ['limit'], { min: 0, max: 0, words: 2 });
      const items = await client().workflows.list().toArray(intOption(v.limit, 'limit'));
      printList(print, items, 'No workflows.', ['ID', 'NAME', 'TRIGGER', 'VERSION', 'UPDATED'], (w) => [
        w.id,
        w.name,
        w.trigger.type,
        w.version,
        w.updated_at,
      ]);
      return EXIT.ok;
    }
    case 'get': {
      const [id] = expectCommand(parsed, 'workflows get', ['workflow-version'], { min: 1, max: 1, words: 2 });
      const version = intOption(v['workflow-version'], 'workflow-version');
      const workflow = await client().workflows.get(id!, version !== undefined ? { version } : {});
      print(workflow, () => JSON.stringify(workflow, null, 2));
      return EXIT.ok;
    }
    case 'versions': {
      const [id] = expectCommand(parsed, 'workflows versions', ['limit'], { min: 1, max: 1, words: 2 });
      const items = await client()
        .workflows.versions(id!)
        .toArray(intOption(v.limit, 'limit') ?? 20);
      printList(print, items, 'No versions.', ['VERSION', 'SAVED'], (version) => [
        version.version,
        version.created_at,
      ]);
      return EXIT.ok;
    }
    case 'queue': {
      const [id] = expectCommand(parsed, 'workflows queue', [], { min: 1, max: 1, words: 2 });
      const queue = await client().workflows.queue(id!);
      print(queue, () =>
        [
          `${queue.queued} queued, ${queue.open} open`,
          ...(queue.keys.length > 0
            ? [
                table(
                  ['KEY', 'QUEUED', 'OPEN'],
                  queue.keys.map((k) => [k.key ?? '(whole workflow)', k.queued, k.open]),
                ),
              ]
            : []),
        ].join('\n'),
      );
      return EXIT.ok;
    }
    case 'apply': {
      expectCommand(parsed, 'workflows apply', ['file', 'dry-run'], { min: 0, max: 0, words: 2 });
      if (!v.file?.length) throw new UsageError('workflows apply needs -f FILE|DIR');
      const files = v.file.flatMap(definitionFiles);
      if (files.length === 0)
        throw new DefinitionFileError(`no .json, .yaml or .yml file in ${v.file.join(', ')}`);
      // Every file is read before anything is applied: a broken one changes nothing.
      const definitions = files.map((file) => ({ file, definition: readDefinition(file) }));
      const api = client();
      const outcomes: ApplyOutcome[] = [];
      const json = v.json ?? false;
      for (const { file, definition } of definitions) {
        const outcome = await applyDefinition(api, file, definition, {
          dryRun: v['dry-run'] ?? false,
          onDiff: (pending) => {
            if (!json) io.stdout(pending.diff!.endsWith('\n') ? pending.diff! : `${pending.diff!}\n`);
          },
        });
        outcomes.push(outcome);
        if (!json) {
          const what =
            outcome.result === 'unchanged'
              ? `unchanged (version ${outcome.version})`
              : `${outcome.result} (version ${outcome.version})`;
          io.stdout(
            `${file}: ${outcome.id} ${what}${v['dry-run'] && outcome.result !== 'unchanged' ? ' [dry run]' : ''}\n`,
          );
        }
      }
      if (json) io.stdout(`${JSON.stringify(outcomes, null, 2)}\n`);
      return EXIT.ok;
    }
    default:
      throw new UsageError(
        sub ? `unknown command 'workflows ${sub}'` : 'workflows needs list, get, versions, queue or apply',
      );
  }
}

async function executions({ parsed, sub, client, print }: Command): Promise<number> {
  const v = parsed.values;
  switch (sub) {
    case 'list': {
      expectCommand(
        parsed,
        'executions list',
        ['workflow', 'status', 'error-code', 'started-after', 'started-before', 'limit'],
        { min: 0, max: 0, words: 2 },
      );
      if (v.status !== undefined && !STATUSES.includes(v.status)) {
        throw new UsageError(`--status must be one of ${STATUSES.join(', ')}`);
      }
      const items = await client()
        .executions.list({
          ...(v.workflow ? { workflow: v.workflow } : {}),
          ...(v.status ? { status: v.status as ExecutionStatus } : {}),
          ...(v['error-code'] ? { error_code: v['error-code'] } : {}),
          ...(v['started-after'] ? { started_after: v['started-after'] } : {}),
          ...(v['started-before'] ? { started_before: v['started-before'] } : {}),
        })
        .toArray(intOption(v.limit, 'limit') ?? 20);
      printList(
        print,
        items,
        'No executions.',
        ['ID', 'WORKFLOW', 'VERSION', 'STATUS', 'STARTED', 'DURATION', 'ERROR'],
        (e) => [
          e.execution_id,
          e.workflow,
          e.workflow_version,
          e.status,
          e.started_at,
          formatDuration(e.duration_ms),
          e.error ? `${e.error.code}: ${e.error.message}` : '',
        ],
      );
      return EXIT.ok;
    }
    case 'get': {
      const [id] = expectCommand(parsed, 'executions get', [], { min: 1, max: 1, words: 2 });
      const execution = await client().executions.get(id!);
      print(execution, () => describeExecution(execution));
      return EXIT.ok;
    }
    case 'runs': {
      const [id, step] = expectCommand(parsed, 'executions runs', ['status', 'limit'], {
        min: 2,
        max: 2,
        words: 2,
      });
      const items = await client()
        .executions.runs(id!, step!, v.status ? { status: v.status as StepRunStatus } : {})
        .toArray(intOption(v.limit, 'limit') ?? 20);
      printList(print, items, 'No runs.', ['RUN', 'STATUS', 'STARTED', 'FINISHED', 'ERROR'], (run) => {
        const failed = run.steps.find((s) => s.status === 'failed');
        return [
          // The run keys of its path: what an approval's `run` names.
          run.path.filter((_, i) => i % 2 === 1).join('/'),
          run.status,
          run.started_at ?? '',
          run.finished_at ?? '',
          failed?.error ? `${failed.id}: ${failed.error.code}: ${failed.error.message}` : '',
        ];
      });
      return EXIT.ok;
    }
    case 'retry': {
      const [id] = expectCommand(parsed, 'executions retry', ['input'], { min: 1, max: 1, words: 2 });
      const input = jsonObjectOption(v.input, 'input');
      const accepted = await client().executions.retry(id!, input ? { input } : {});
      print(accepted, () => `Retrying ${accepted.execution_id} from step ${accepted.retried_from_step}`);
      return EXIT.ok;
    }
    case 'cancel': {
      const [id] = expectCommand(parsed, 'executions cancel', [], { min: 1, max: 1, words: 2 });
      const accepted = await client().executions.cancel(id!);
      print(accepted, () => `Cancel requested for ${accepted.execution_id}`);
      return EXIT.ok;
    }
    case 'approve':
    case 'reject': {
      const [id, step] = expectCommand(parsed, `executions ${sub}`, ['comment'], {
        min: 2,
        max: 2,
        words: 2,
      });
      const body = v.comment !== undefined ? { comment: v.comment } : {};
      const api = client();
      const decided =
        sub === 'approve'
          ? await api.executions.approve(id!, step!, body)
          : await api.executions.reject(id!, step!, body);
      print(decided, () => `Step ${decided.id} of ${id!}: ${sub === 'approve' ? 'approved' : 'rejected'}`);
      return EXIT.ok;
    }
    default:
      throw new UsageError(
        sub
          ? `unknown command 'executions ${sub}'`
          : 'executions needs list, get, runs, retry, cancel, approve or reject',
      );
  }
}

async function events({ parsed, sub, client, print }: Command): Promise<number> {
  const v = parsed.values;
  switch (sub) {
    case 'send': {
      const [name] = expectCommand(parsed, 'events send', ['data', 'id'], { min: 1, max: 1, words: 2 });
      const data = jsonObjectOption(v.data, 'data') ?? {};
      const accepted = await client().events.send({ name: name!, data, ...(v.id ? { id: v.id } : {}) });
      print(accepted, () => `Sent ${accepted.ids[0]!}`);
      return EXIT.ok;
    }
    case 'list': {
      expectCommand(parsed, 'events list', ['name', 'limit'], { min: 0, max: 0, words: 2 });
      const items = await client()
        .events.list(v.name ? { name: v.name } : {})
        .toArray(intOption(v.limit, 'limit') ?? 20);
      printList(print, items, 'No events.', ['ID', 'NAME', 'RECEIVED', 'STARTED', 'WOKE', 'ERRORS'], (e) => [
        e.id,
        e.name,
        e.received_at,
        e.started.length,
        e.woke.length,
        e.errors.length,
      ]);
      return EXIT.ok;
    }
    case 'show': {
      const [id] = expectCommand(parsed, 'events show', [], { min: 1, max: 1, words: 2 });
      const event = await client().events.get(id!);
      print(event, () => describeEvent(event));
      return EXIT.ok;
    }
    default:
      throw new UsageError(sub ? `unknown command 'events ${sub}'` : 'events needs send, list or show');
  }
}

/** An event: what it is, its data, the executions it started and woke, and the triggers that refused it. */
export function describeEvent(event: Event): string {
  const lines = [
    `Event ${event.id} (${event.name}), received ${event.received_at}`,
    ...(event.source !== undefined ? [`Source: ${event.source}`] : []),
    ...(event.subject !== undefined ? [`Subject: ${event.subject}`] : []),
    '',
    JSON.stringify(event.data, null, 2),
    '',
    `Started: ${event.started.length === 0 ? 'none' : event.started.join(', ')}`,
    `Woke: ${event.woke.length === 0 ? 'none' : event.woke.join(', ')}`,
  ];
  for (const error of event.errors)
    lines.push(`Refused by ${error.workflow}: ${error.code}: ${error.message}`);
  return lines.join('\n');
}

async function runs(command: Command): Promise<number> {
  const { parsed, sub, client, print } = command;
  switch (sub) {
    case 'cancel':
    case 'retry':
    case 'rerun':
      return bulkRuns(command, sub);
    case 'show': {
      const [id] = expectCommand(parsed, 'runs show', [], { min: 1, max: 1, words: 2 });
      const execution = await client().executions.get(id!);
      print(execution, () => describeExecution(execution, 'tree'));
      return EXIT.ok;
    }
    default:
      throw new UsageError(sub ? `unknown command 'runs ${sub}'` : 'runs needs show, cancel, retry or rerun');
  }
}

async function webhooks({ parsed, sub, client, print }: Command): Promise<number> {
  const v = parsed.values;
  switch (sub) {
    case 'list': {
      expectCommand(parsed, 'webhooks list', ['limit'], { min: 0, max: 0, words: 2 });
      const items = await client().webhooks.list().toArray(intOption(v.limit, 'limit'));
      printList(
        print,
        items,
        'No webhook endpoints.',
        ['ID', 'URL', 'STATUS', 'EVENTS', 'DESCRIPTION'],
        (w) => [w.id, w.url, w.status, w.events.join(','), w.description],
      );
      return EXIT.ok;
    }
    case 'deliveries': {
      const [id] = expectCommand(parsed, 'webhooks deliveries', ['limit'], { min: 1, max: 1, words: 2 });
      const items = await client()
        .webhooks.deliveries(id!)
        .toArray(intOption(v.limit, 'limit') ?? 20);
      printList(
        print,
        items,
        'No deliveries.',
        ['ID', 'EVENT', 'EXECUTION', 'STATUS', 'ATTEMPTS', 'LAST', 'CREATED'],
        (d) => {
          const last = d.attempts.at(-1);
          return [
            d.id,
            d.event,
            d.execution_id,
            d.status,
            d.attempts.length,
            last ? (last.status_code ?? last.error) : '',
            d.created_at,
          ];
        },
      );
      return EXIT.ok;
    }
    default:
      throw new UsageError(sub ? `unknown command 'webhooks ${sub}'` : 'webhooks needs list or deliveries');
  }
}

/** The workspace's limits beside what it uses of them (`-` where a limit counts nothing that exists). */
export function describeWorkspace(workspace: Workspace): string {
  const { limits, usage } = workspace;
  const rows: [string, number | null, number | string][] = [
    ['workflows', limits.workflows, usage.workflows],
    ['secrets', limits.secrets, usage.secrets],
    ['webhook_endpoints', limits.webhook_endpoints, usage.webhook_endpoints],
    ['api_keys', limits.api_keys, usage.api_keys],
    ['open_executions', limits.open_executions, usage.open_executions],
    ['steps_per_definition', limits.steps_per_definition, '-'],
    ['ai_tokens_per_day', limits.ai_tokens_per_day, `${usage.ai_tokens_today} today`],
  ];
  return [
    `Workspace ${workspace.id} (${workspace.name})`,
    '',
    table(
      ['LIMIT', 'USED', 'MAXIMUM'],
      rows.map(([name, max, used]) => [name, used, max === null ? 'unlimited' : max]),
    ),
  ].join('\n');
}

/**
 * An execution's summary line, its steps (a table of the top-level ones, or the `tree` with the runs of
 * containers and their steps), its error, and why it is stuck if it is.
 */
export function describeExecution(execution: Execution, steps: 'table' | 'tree' = 'table'): string {
  const lines = [
    `Execution ${execution.execution_id} (${execution.workflow} v${execution.workflow_version}): ${execution.status} in ${formatDuration(execution.duration_ms)}`,
    '',
    table(
      ['STEP', 'KIND', 'STATUS', 'DURATION'],
      steps === 'tree'
        ? stepTree(execution)
        : execution.steps.map((s) => [s.id, s.kind, stepStatus(s), formatDuration(s.duration_ms)]),
    ),
  ];
  const { error } = execution;
  if (error) {
    // Inside a container, where: its path of containers and run keys (`notify_all/3/send`).
    const where = error.path && error.path.length > 1 ? ` (${error.path.join('/')})` : '';
    lines.push(
      '',
      `Error${error.step ? ` at step ${error.step}${where}` : ''}: ${error.code}: ${error.message}`,
    );
  }
  const stalled = execution.stalled;
  if (stalled) {
    // Stuck on a workflow task that keeps failing: an operator recovers it (docs/operations.md).
    lines.push(
      '',
      `Stuck since ${stalled.since} on build ${stalled.build_id ?? '(unversioned)'}: ${stalled.reason}, workflow task attempt ${stalled.attempts}: ${stalled.message}`,
    );
  }
  return lines.join('\n');
}

/** The key from stdin: a prompt on a terminal, the first line of a pipe. */
async function readKey(): Promise<string | undefined> {
  const lines = createInterface({
    input: process.stdin,
    output: process.stdin.isTTY ? process.stderr : undefined,
  });
  try {
    const answer = process.stdin.isTTY ? await lines.question('API key: ') : await firstLine(lines);
    return answer?.trim() || undefined;
  } finally {
    lines.close();
  }
}

async function firstLine(lines: AsyncIterable<string>): Promise<string | undefined> {
  for await (const line of lines) return line;
  return undefined;
}

function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
    version: string;
  };
  return manifest.version;
}

function defaultIo(): Io {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    env: process.env,
  };
}

if (require.main === module) {
  void main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
