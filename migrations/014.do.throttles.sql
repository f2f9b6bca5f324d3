-- Flow control's throttle (docs/flow-control.md#throttle, ARCHITECTURE.md#flow-control): at most a limit of
-- executions per key start in any window of a period. `throttle_waits`: one row per execution of a definition
-- with `throttle`, from its run's `acquire_throttle` to its end; `state` queued (its run waits in Temporal for
-- the `throttle_admitted` signal) or granted (its start is recorded in `throttle_starts`). `throttle_keys`:
-- the keys whose queue waits for its window to free a start, and when it does (`next_at`), which the API's
-- throttle sweeper grants. Every change to a key's rows takes the key's advisory lock
-- (platform/store/throttles.ts). `key_id`: the key's identity as one text (workspace, workflow and key).
create table throttle_waits (
  execution_id text primary key,
  workspace_id text not null references workspaces (id) on delete cascade,
  workflow_id text not null,
  key text,
  key_id text not null,
  throttle_limit integer not null check (throttle_limit > 0),
  period_ms integer not null check (period_ms > 0),
  priority integer not null default 0,
  seq bigserial not null,
  state text not null check (state in ('queued', 'granted')),
  enqueued_at timestamptz not null default now(),
  granted_at timestamptz,
  signaled_at timestamptz
);
create index throttle_waits_key_idx on throttle_waits (key_id, state, priority desc, seq);
create index throttle_waits_workflow_idx on throttle_waits (workspace_id, workflow_id, state);
create index throttle_waits_unsignaled_idx on throttle_waits (granted_at)
  where state = 'granted' and signaled_at is null;

create table throttle_starts (
  key_id text not null,
  workspace_id text not null references workspaces (id) on delete cascade,
  started_at timestamptz not null
);
create index throttle_starts_key_idx on throttle_starts (key_id, started_at);

create table throttle_keys (
  key_id text primary key,
  workspace_id text not null references workspaces (id) on delete cascade,
  next_at timestamptz not null
);
create index throttle_keys_next_idx on throttle_keys (next_at);
