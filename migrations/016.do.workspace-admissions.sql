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

-- A run's acquire and release are each one statement (one round trip) that takes the workspace's advisory
-- lock first: in a volatile PL/pgSQL function every query after the lock takes a new snapshot, so it sees
-- every change committed under the lock before, as a transaction of several statements would.
-- Acquire: the existing row's state, or a new row, open when the workspace has a free place and no queue.
create function workspace_admission_acquire(
  p_execution_id text, p_workspace_id text, p_priority integer, p_limit integer
) returns table (state text, created boolean) language plpgsql volatile as $$
#variable_conflict use_column
begin
  perform pg_advisory_xact_lock(hashtextextended('workspace-cap:' || p_workspace_id, 0));
  return query
    with existing as (
      select a.state from workspace_admissions a where a.execution_id = p_execution_id
    ), decided as (
      select case
        when p_limit is null then 'open'
        when not exists (
          select 1 from workspace_admissions q where q.workspace_id = p_workspace_id and q.state = 'queued'
        ) and (
          select count(*) from workspace_admissions o where o.workspace_id = p_workspace_id and o.state = 'open'
        ) < p_limit then 'open'
        else 'queued' end as state
    ), inserted as (
      insert into workspace_admissions (execution_id, workspace_id, priority, state, admitted_at, signaled_at)
      select p_execution_id, p_workspace_id, p_priority, d.state,
             case when d.state = 'open' then now() end, case when d.state = 'open' then now() end
      from decided d where not exists (select 1 from existing)
      returning workspace_admissions.state
    )
    select i.state, true from inserted i
    union all select e.state, false from existing e;
end $$;

-- Release: the row goes (with `p_seq`, only that row), and the places then free under `p_limit` (null:
-- unlimited) go to the queued rows, best first; returns the executions opened.
create function workspace_admission_release(
  p_execution_id text, p_workspace_id text, p_limit integer, p_seq bigint
) returns setof text language plpgsql volatile as $$
declare
  free integer;
begin
  perform pg_advisory_xact_lock(hashtextextended('workspace-cap:' || p_workspace_id, 0));
  delete from workspace_admissions
  where execution_id = p_execution_id and workspace_id = p_workspace_id and (p_seq is null or seq = p_seq);
  if not exists (
    select 1 from workspace_admissions where workspace_id = p_workspace_id and state = 'queued'
  ) then
    return;
  end if;
  select case when p_limit is null then 1000 else least(1000, greatest(0, p_limit - count(*)))::integer end
  into free
  from workspace_admissions where workspace_id = p_workspace_id and state = 'open';
  return query
    update workspace_admissions set state = 'open', admitted_at = now()
    where execution_id in (
      select q.execution_id from workspace_admissions q
      where q.workspace_id = p_workspace_id and q.state = 'queued'
      order by q.priority desc, q.seq limit free
    )
    returning execution_id;
end $$;
