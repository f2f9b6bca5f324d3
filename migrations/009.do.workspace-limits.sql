-- Per-workspace limits (docs/operations.md#workspace-limits). Defaults come from the environment
-- (WORKSPACE_MAX_*); a row here is an operator's override of one limit for one workspace (`npm run admin --
-- set-limits`): `maximum` is the limit, NULL meaning unlimited. No row: the default applies.
create table workspace_limits (
  workspace_id text not null references workspaces (id) on delete cascade,
  name text not null check (name in ('workflows', 'secrets', 'webhook_endpoints', 'api_keys',
                                     'open_executions', 'steps_per_definition', 'ai_tokens_per_day')),
  maximum bigint check (maximum >= 0),
  updated_at timestamptz not null default now(),
  primary key (workspace_id, name)
);

-- AI tokens a workspace's steps used on one UTC day (workers/activities/ai.ts), for the
-- `ai_tokens_per_day` budget. One row per workspace: the first call of a new day starts it again from that
-- call's tokens, so the table never grows with time.
create table workspace_ai_usage (
  workspace_id text primary key references workspaces (id) on delete cascade,
  day date not null,
  tokens bigint not null
);
