-- Flow control's admission (docs/flow-control.md, ARCHITECTURE.md#flow-control): one row per execution of a
-- definition with `concurrency`, from its run's first act (`acquire_admission`) to its last
-- (`release_admission`). `state`: open (it runs: one of the key's `concurrency_limit` places) or queued (its
-- run waits in Temporal for the `admitted` signal). A run's admission, release and every grant take the
-- key's advisory lock (platform/store/admissions.ts), so several workers and API processes never open more
-- than the limit. `key` null: the definition has no key expression, the whole workflow is one key.
-- `signaled_at`: when the run was told it is open (a granted row still null after a few seconds is signaled
-- again by the API's sweeper); `checked_at`: when the sweeper last made sure its run is still open.
create table admissions (
  execution_id text primary key,
  workspace_id text not null references workspaces (id) on delete cascade,
  workflow_id text not null,
  key text,
  concurrency_limit integer not null check (concurrency_limit > 0),
  priority integer not null default 0,
  seq bigserial not null,
  state text not null check (state in ('queued', 'open')),
  enqueued_at timestamptz not null default now(),
  admitted_at timestamptz,
  signaled_at timestamptz,
  checked_at timestamptz not null default now()
);
-- A key's queued rows in the order they are admitted (priority, then arrival), and its open count; a
-- workflow's counts (GET /v1/workflows/{id}/queue).
create index admissions_key_idx
  on admissions (workspace_id, workflow_id, key, state, priority desc, seq);
-- The sweeper: granted rows not yet signaled; keys with queued rows; rows whose run it checks in turn.
create index admissions_unsignaled_idx on admissions (admitted_at)
  where state = 'open' and signaled_at is null;
create index admissions_queued_idx on admissions (workspace_id, workflow_id, key) where state = 'queued';
create index admissions_checked_idx on admissions (checked_at);
