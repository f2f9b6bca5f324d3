-- Bulk operations (docs/operations.md#bulk-operations, POST /v1/bulk-operations): one row per operation, and one
-- per execution it matched, chosen when the operation was created (the filter's executions then). The API's
-- bulk runner (src/bulk/runner.ts) claims a running operation with a lease (FOR UPDATE SKIP LOCKED), acts
-- on its pending executions a few at a time at a bounded rate, and records each outcome; a row whose
-- lease ran out (its process died) is claimed again and goes on where it stopped.
create table bulk_operations (
  workspace_id text not null references workspaces (id) on delete cascade,
  id text not null,
  seq bigserial not null,
  action text not null check (action in ('cancel', 'retry', 'rerun')),
  filter jsonb not null,
  -- retry: {input}; rerun: {version: same | latest}.
  options jsonb not null default '{}',
  status text not null default 'running' check (status in ('running', 'completed', 'canceled')),
  matched integer not null,
  created_by text,
  created_at timestamptz not null default now(),
  finished_at timestamptz,
  lease_until timestamptz,
  primary key (workspace_id, id)
);
create unique index bulk_operations_list_idx on bulk_operations (workspace_id, seq);
create index bulk_operations_running_idx on bulk_operations (created_at) where status = 'running';

-- An execution an operation matched, and what the operation did to it. `state`: pending (not yet acted on),
-- acting (an action under way: after a crash, acted on again, every action being safe to repeat),
-- succeeded, failed, skipped (it did not qualify). `seq`: the order they are acted on and listed.
create table bulk_operation_items (
  workspace_id text not null,
  operation_id text not null,
  execution_id text not null,
  seq integer not null,
  state text not null default 'pending'
    check (state in ('pending', 'acting', 'succeeded', 'failed', 'skipped')),
  error_code text,
  error_message text,
  -- rerun: the execution it started.
  result_execution_id text,
  primary key (workspace_id, operation_id, execution_id),
  foreign key (workspace_id, operation_id) references bulk_operations (workspace_id, id) on delete cascade
);
create index bulk_operation_items_next_idx on bulk_operation_items (workspace_id, operation_id, state, seq);
