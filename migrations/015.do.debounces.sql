-- Flow control's debounce (docs/flow-control.md#debounce, ARCHITECTURE.md#flow-control): triggers of one key
-- that come within a period of each other make one execution. One row per debounced execution, written by the
-- trigger that creates it; later triggers of the key replace `input` and count themselves in `coalesced` while
-- `state` is waiting, and push `due_at` back (to `period_ms` after the last trigger, at most
-- `max_wait_ms` after `first_at`); the run's `end_debounce` turns it to started at `due_at`, and takes the last input; the row goes when the run ends.
-- Every change to a key's rows takes the key's advisory lock (platform/store/debounces.ts), so two API
-- processes never make two executions of one waiting key. `start`: what the run is started with (the
-- execution input, first trigger's input included), kept until `run_started` so that the API's sweeper can
-- start a run whose trigger process died between this row and Temporal's start.
create table debounces (
  execution_id text primary key,
  workspace_id text not null references workspaces (id) on delete cascade,
  workflow_id text not null,
  key text,
  key_id text not null,
  state text not null check (state in ('waiting', 'started')),
  input jsonb not null,
  body jsonb,
  event jsonb,
  coalesced integer not null default 1,
  period_ms integer not null check (period_ms > 0),
  max_wait_ms bigint,
  first_at timestamptz not null default now(),
  last_at timestamptz not null default now(),
  due_at timestamptz not null,
  start jsonb,
  run_started boolean not null default false
);
-- At most one waiting execution per key: the one later triggers coalesce into.
create unique index debounces_waiting_idx on debounces (key_id) where state = 'waiting';
-- The sweeper: rows whose run was never started; waiting rows long past due (their run ended without a word).
create index debounces_unstarted_idx on debounces (first_at) where not run_started;
create index debounces_due_idx on debounces (due_at) where state = 'waiting';
create index debounces_workflow_idx on debounces (workspace_id, workflow_id, state);
