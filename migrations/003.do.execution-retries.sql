-- Retries from the failed step: one row per retried run. The row serializes concurrent retry requests
-- (one reset per failed run), remembers whether the reset run got its `retry` signal (a request that
-- died in between is completed by the next one), and marks the failed run as superseded so execution
-- lists show each execution once (Temporal keeps the failed run beside the new one).
create table execution_retries (
  workspace_id text not null references workspaces (id) on delete cascade,
  execution_id text not null,
  base_run_id text primary key,
  new_run_id text,
  retried_from_step text not null,
  signaled boolean not null default false,
  created_at timestamptz not null default now()
);
create index execution_retries_execution_idx on execution_retries (workspace_id, execution_id);
