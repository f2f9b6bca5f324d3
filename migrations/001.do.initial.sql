-- Workspaces, API keys, versioned workflow definitions and trigger idempotency keys.
-- Executions are not stored here: Temporal is their source of truth.

create table workspaces (
  id text primary key,
  name text not null,
  created_at timestamptz not null default now()
);

create table api_keys (
  id text primary key,
  workspace_id text not null references workspaces (id) on delete cascade,
  name text not null,
  scopes text[] not null,
  -- The first characters of the key, shown in listings so people can tell keys apart.
  prefix text not null,
  -- SHA-256 of the whole key; the key itself is never stored.
  key_hash text not null unique,
  created_at timestamptz not null default now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);
create index api_keys_workspace_idx on api_keys (workspace_id, created_at, id);

create table workflows (
  workspace_id text not null references workspaces (id) on delete cascade,
  id text not null,
  latest_version integer not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (workspace_id, id)
);

create table workflow_versions (
  workspace_id text not null,
  workflow_id text not null,
  version integer not null,
  definition jsonb not null,
  created_at timestamptz not null default now(),
  primary key (workspace_id, workflow_id, version),
  foreign key (workspace_id, workflow_id) references workflows (workspace_id, id) on delete cascade
);

create table idempotency_keys (
  workspace_id text not null,
  workflow_id text not null,
  key text not null,
  execution_id text not null,
  created_at timestamptz not null default now(),
  primary key (workspace_id, workflow_id, key)
);
create index idempotency_keys_created_idx on idempotency_keys (created_at);
