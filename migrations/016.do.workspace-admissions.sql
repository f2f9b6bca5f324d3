-- Flow control's workspace cap (docs/flow-control.md#workspace-cap, ARCHITECTURE.md#flow-control): one row per
-- top-level execution of a workspace with a cap on open executions, from its `acquire_workspace_place`
-- (after the definition's own gates) to its `release_admission`. `state`: open (one of the workspace's
-- `open_executions` places) or queued (its run waits in Temporal for the `workspace_admitted` signal). Every
-- change to a workspace's rows takes the workspace's advisory lock (platform/store/workspace-admissions.ts),
-- so several workers and API processes never open more than the cap. `signaled_at` and `checked_at` as in
-- `admissions` (migration 013): the API's sweeper tells untold grants again and checks rows against their run.
create table workspace_admissions (
  execution_id text primary key,
  workspace_id text not null references workspaces (id) on delete cascade,
  priority integer not null default 0,
  seq bigserial not null,
  state text not null check (state in ('queued', 'open')),
  enqueued_at timestamptz not null default now(),
  admitted_at timestamptz,
  signaled_at timestamptz,
  checked_at timestamptz not null default now()
);
-- A workspace's open count, and its queued rows in the order they are admitted (priority, then arrival).
create index workspace_admissions_queue_idx
  on workspace_admissions (workspace_id, state, priority desc, seq);
-- The sweeper: granted rows not yet signaled; workspaces with queued rows; rows whose run it checks in turn.
-- A run admitted at once is written signaled and open, so the partial indexes hold only runs that queued.
create index workspace_admissions_unsignaled_idx on workspace_admissions (admitted_at)
  where state = 'open' and signaled_at is null;
create index workspace_admissions_queued_idx on workspace_admissions (workspace_id) where state = 'queued';
create index workspace_admissions_checked_idx on workspace_admissions (checked_at);
