-- The one-statement paths of the key gate (migration 017) and the workspace cap (016) for several runs in one
-- statement: a worker that has
-- several runs asking at once sends them together (platform/store/statement-groups.ts), paying one round
-- trip and one commit for all. Each element is exactly the single function's work, under its key's lock;
-- the locks are taken in the order of their ids (the lock's hash), so that two groups of any processes, each
-- holding some keys' locks, never wait for each other in a cycle.

-- admission_try_open for each element: `ord` is the element's place in the arrays (1-based), `state` the
-- single function's answer.
create function admission_try_open_many(
  p_execution_ids text[], p_workspace_ids text[], p_workflow_ids text[], p_keys text[], p_limits integer[],
  p_priorities integer[]
) returns table (ord bigint, state text) language plpgsql volatile as $$
declare
  r record;
begin
  for r in
    select t.execution_id, t.workspace_id, t.workflow_id, t.key, t.lim, t.priority, t.n
    from unnest(p_execution_ids, p_workspace_ids, p_workflow_ids, p_keys, p_limits, p_priorities)
      with ordinality as t(execution_id, workspace_id, workflow_id, key, lim, priority, n)
    order by hashtextextended(
      'admission:' || t.workspace_id || ':' || t.workflow_id || ':' || coalesce('=' || t.key, '-'), 0), t.n
  loop
    ord := r.n;
    state := admission_try_open(r.execution_id, r.workspace_id, r.workflow_id, r.key, r.lim, r.priority);
    return next;
  end loop;
end $$;

-- admission_release for each execution: its throttle row goes, its admission row goes, and the keys with
-- runs queued are answered (the caller grants them). An execution without a row answers nothing.
create function admission_release_many(p_execution_ids text[])
returns table (workspace_id text, workflow_id text, key text) language plpgsql volatile as $$
declare
  r record;
begin
  delete from throttle_waits t where t.execution_id = any(p_execution_ids);
  for r in
    select a.execution_id from admissions a where a.execution_id = any(p_execution_ids)
    order by hashtextextended(
      'admission:' || a.workspace_id || ':' || a.workflow_id || ':' || coalesce('=' || a.key, '-'), 0)
  loop
    return query select q.workspace_id, q.workflow_id, q.key from admission_release(r.execution_id) q;
  end loop;
end $$;

-- The workspace cap's (migration 016) in the same way, its locks in the order of their ids too.
-- workspace_admission_acquire for each element, by its place in the arrays.
create function workspace_admission_acquire_many(
  p_execution_ids text[], p_workspace_ids text[], p_priorities integer[], p_limits integer[]
) returns table (ord bigint, state text, created boolean) language plpgsql volatile as $$
declare
  r record;
begin
  for r in
    select t.execution_id, t.workspace_id, t.priority, t.lim, t.n
    from unnest(p_execution_ids, p_workspace_ids, p_priorities, p_limits)
      with ordinality as t(execution_id, workspace_id, priority, lim, n)
    order by hashtextextended('workspace-cap:' || t.workspace_id, 0), t.n
  loop
    ord := r.n;
    select a.state, a.created into state, created
      from workspace_admission_acquire(r.execution_id, r.workspace_id, r.priority, r.lim) a;
    return next;
  end loop;
end $$;

-- workspace_admission_release for each element (no `seq`: a run's own release): the executions it opened.
create function workspace_admission_release_many(
  p_execution_ids text[], p_workspace_ids text[], p_limits integer[]
) returns table (ord bigint, execution_id text) language plpgsql volatile as $$
declare
  r record;
begin
  for r in
    select t.execution_id, t.workspace_id, t.lim, t.n
    from unnest(p_execution_ids, p_workspace_ids, p_limits) with ordinality as t(execution_id, workspace_id, lim, n)
    order by hashtextextended('workspace-cap:' || t.workspace_id, 0), t.n
  loop
    return query select r.n, g.opened
      from workspace_admission_release(r.execution_id, r.workspace_id, r.lim, null) as g(opened);
  end loop;
end $$;
