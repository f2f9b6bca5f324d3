/**
 * `npm run admin -- <command>`: operator commands that work without an API key — create workspaces and
 * keys (printed once), list workspaces, revoke keys, show and change a workspace's limits
 * (docs/operations.md#workspace-limits). They reach the database directly: DATABASE_URL,
 * the running service's embedded database through its socket, or the embedded files when it is stopped.
 * `move-runs` reaches Temporal instead (processes/move-runs.ts).
 */
import { parseArgs } from 'node:util';
import pg from 'pg';
import { loadConfig, type Config } from '../platform/config';
import { createApiKey, revokeApiKey, SCOPES, type Scope } from '../platform/store/api-keys';
import { canServeSocket, lockHolder, PGLITE_SOCKET_PORT } from '../platform/store/data-dir-lock';
import { openDatabase, type Queryable } from '../platform/store/db';
import { migrate } from '../platform/store/migrate';
import { aiTokensToday } from '../platform/store/ai-usage';
import {
  countedUsage,
  readLimitOverrides,
  setLimitOverrides,
  type LimitSetting,
} from '../platform/store/workspace-limits';
import { workspaceRowCounts } from '../platform/store/workspace-admissions';
import { createWorkspace, getWorkspace, listWorkspaces, type Workspace } from '../platform/store/workspaces';
import { newWorkspaceId } from '../platform/ids';
import { LIMIT_NAMES, type LimitName } from '../core/workspace-limits';
import { moveRunsCommand } from './move-runs';

/** The limits as command-line options: --webhook-endpoints sets webhook_endpoints. */
const LIMIT_OPTIONS = LIMIT_NAMES.map((name) => `--${name.replaceAll('_', '-')}`);

const USAGE = `Usage: npm run admin -- <command> [options]

Commands:
  create-workspace --name <name> [--id <id>]     create a workspace and print an admin key for it
  create-key --workspace <id> [--name <name>] [--scopes read,write,admin]
                                                 create an API key and print it (shown once)
  revoke-key --workspace <id> --id <key id>      revoke an API key
  list-workspaces                                list workspaces
  show-limits --workspace <id>                   a workspace's limits, where each comes from, and its usage
  set-limits --workspace <id> [--<limit> <value>]...
                                                 change a workspace's limits; <value> is a whole number,
                                                 "unlimited", or "default" (follow WORKSPACE_MAX_* again)
      limits: ${LIMIT_OPTIONS.join(', ')}
      e.g. set-limits --workspace acme --workflows 10 --secrets unlimited --api-keys default
  move-runs [--from <build>] [--execution <id>]... [--query <visibility query>] [--to <build>] [--yes]
                                                 move running executions onto this checkout's worker build,
                                                 each only if its history replays on this build's code;
                                                 without --yes, only report (exit 3: some would not replay)

The database is DATABASE_URL, or the embedded one in DATA_DIR (${process.env['DATA_DIR'] ?? './.data'}).`;

const WORKSPACE_ID_PATTERN = /^[a-z0-9][a-z0-9_-]{0,62}$/;

function fail(message: string): never {
  process.stderr.write(`${message}\n\n${USAGE}\n`);
  process.exit(2);
}

interface Connection {
  db: Queryable;
  close(): Promise<void>;
}

/** The running service owns embedded files; talk to it through its socket rather than open them twice. */
async function connect(config: Config): Promise<Connection> {
  if (!config.databaseUrl && lockHolder(config.dataDir) !== undefined) {
    if (!canServeSocket(config.dataDir))
      fail(
        `The service is running on ${config.dataDir}; stop it first (its socket path is too long to connect).`,
      );
    const client = new pg.Client({
      host: config.dataDir,
      port: PGLITE_SOCKET_PORT,
      user: 'postgres',
      database: 'postgres',
    });
    await client.connect();
    return {
      db: {
        query: async <Row>(sql: string, params?: unknown[]) =>
          (await client.query(sql, params)).rows as Row[],
      },
      close: () => client.end(),
    };
  }
  const db = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir, maxConnections: 1 });
  await migrate(db);
  return { db, close: () => db.close() };
}

function parseScopes(value: string | undefined): Scope[] {
  const scopes = (value ?? 'admin')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (scopes.length === 0 || unknown.length > 0)
    fail(`Unknown scope(s): ${unknown.join(', ') || '(none given)'}; use ${SCOPES.join(', ')}.`);
  return scopes as Scope[];
}

/** The --<limit> options given, as changes: a whole number, "unlimited" (null) or "default". */
function limitChanges(values: Record<string, unknown>): Map<LimitName, LimitSetting> {
  const changes = new Map<LimitName, LimitSetting>();
  for (const name of LIMIT_NAMES) {
    const option = name.replaceAll('_', '-');
    const value = values[option];
    if (typeof value !== 'string') continue;
    if (value === 'unlimited') changes.set(name, null);
    else if (value === 'default') changes.set(name, 'default');
    else if (/^\d{1,15}$/.test(value)) changes.set(name, Number(value));
    else fail(`--${option} must be a whole number, "unlimited" or "default", not '${value}'.`);
  }
  return changes;
}

/** A workspace's limits as a table: each limit, where it comes from, and what the database knows of its use. */
async function limitsReport(db: Queryable, workspace: Workspace, config: Config): Promise<string> {
  const overrides = await readLimitOverrides(db, workspace.id);
  const counted = await countedUsage(db, workspace.id);
  const ai = await aiTokensToday(db, workspace.id);
  const cap = overrides.has('open_executions')
    ? overrides.get('open_executions')
    : config.workspaceLimits.open_executions;
  const openUnderCap = cap === null ? undefined : (await workspaceRowCounts(db, workspace.id)).open;
  const usage: Record<LimitName, string> = {
    workflows: String(counted.workflows),
    secrets: String(counted.secrets),
    webhook_endpoints: String(counted.webhook_endpoints),
    api_keys: String(counted.api_keys),
    // Under a cap, the places it holds (the database's); without one, counted by Temporal, which this
    // command does not reach.
    open_executions: openUnderCap === undefined ? '(GET /v1/workspace)' : String(openUnderCap),
    steps_per_definition: '-',
    ai_tokens_per_day: `${ai.tokens} today`,
  };
  const rows = LIMIT_NAMES.map((name) => {
    const value = overrides.has(name) ? overrides.get(name)! : config.workspaceLimits[name];
    return [
      name,
      value === null ? 'unlimited' : String(value),
      overrides.has(name) ? 'workspace' : 'default',
      usage[name],
    ];
  });
  const widths = [0, 1, 2].map((column) =>
    Math.max(...[LIMITS_HEADER, ...rows].map((row) => row[column]!.length)),
  );
  const lines = [LIMITS_HEADER, ...rows].map((row) =>
    row.map((cell, column) => (column < 3 ? cell.padEnd(widths[column]!) : cell)).join('  '),
  );
  return `Workspace: ${workspace.id} (${workspace.name})\n${lines.join('\n')}\n`;
}

const LIMITS_HEADER = ['LIMIT', 'MAXIMUM', 'SET BY', 'USAGE'];

async function main(): Promise<void> {
  const [command, ...rest] = process.argv.slice(2);
  if (!command || command === '--help' || command === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const { values } = parseArgs({
    args: rest,
    options: {
      name: { type: 'string' },
      id: { type: 'string' },
      workspace: { type: 'string' },
      scopes: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      execution: { type: 'string', multiple: true },
      query: { type: 'string' },
      yes: { type: 'boolean' },
      ...Object.fromEntries(LIMIT_OPTIONS.map((option) => [option.slice(2), { type: 'string' } as const])),
    },
    strict: true,
  });
  const config = loadConfig();
  if (command === 'move-runs') {
    process.exitCode = await moveRunsCommand(
      config,
      {
        from: values.from,
        to: values.to,
        executions: values.execution ?? [],
        query: values.query,
        yes: values.yes === true,
      },
      (line) => process.stdout.write(`${line}\n`),
    );
    return;
  }
  const connection = await connect(config);
  try {
    switch (command) {
      case 'create-workspace': {
        if (!values.name) fail('create-workspace needs --name.');
        const id = values.id ?? newWorkspaceId().toLowerCase();
        if (!WORKSPACE_ID_PATTERN.test(id))
          fail(`Invalid workspace id '${id}': lowercase letters, digits, "-" and "_".`);
        if (await getWorkspace(connection.db, id)) fail(`Workspace '${id}' already exists.`);
        await createWorkspace(connection.db, id, values.name);
        const { record, key } = await createApiKey(connection.db, {
          workspaceId: id,
          name: 'admin',
          scopes: ['admin'],
        });
        process.stdout.write(
          `Workspace: ${id}\nAPI key id: ${record.id} (scopes: admin)\nAPI key (shown once): ${key}\n`,
        );
        break;
      }
      case 'create-key': {
        const workspaceId = values.workspace ?? 'default';
        if (!(await getWorkspace(connection.db, workspaceId)))
          fail(`No workspace '${workspaceId}' (npm run admin -- list-workspaces).`);
        const scopes = parseScopes(values.scopes);
        const { record, key } = await createApiKey(connection.db, {
          workspaceId,
          name: values.name ?? 'cli',
          scopes,
        });
        process.stdout.write(
          `Workspace: ${workspaceId}\nAPI key id: ${record.id} (scopes: ${scopes.join(', ')})\nAPI key (shown once): ${key}\n`,
        );
        break;
      }
      case 'revoke-key': {
        if (!values.workspace || !values.id) fail('revoke-key needs --workspace and --id.');
        if (!(await revokeApiKey(connection.db, values.workspace, values.id)))
          fail(`No key '${values.id}' in workspace '${values.workspace}'.`);
        process.stdout.write(`Revoked ${values.id}.\n`);
        break;
      }
      case 'list-workspaces': {
        for (const workspace of await listWorkspaces(connection.db)) {
          process.stdout.write(`${workspace.id}\t${workspace.name}\t${workspace.created_at.toISOString()}\n`);
        }
        break;
      }
      case 'show-limits':
      case 'set-limits': {
        if (!values.workspace) fail(`${command} needs --workspace.`);
        const workspace = await getWorkspace(connection.db, values.workspace);
        if (!workspace) fail(`No workspace '${values.workspace}' (npm run admin -- list-workspaces).`);
        if (command === 'set-limits') {
          const changes = limitChanges(values);
          if (changes.size === 0) fail(`set-limits needs at least one of ${LIMIT_OPTIONS.join(', ')}.`);
          await setLimitOverrides(connection.db, workspace.id, changes);
        }
        process.stdout.write(await limitsReport(connection.db, workspace, config));
        break;
      }
      default:
        fail(`Unknown command '${command}'.`);
    }
  } finally {
    await connection.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).message ?? String(error)}\n`);
  process.exit(1);
});
