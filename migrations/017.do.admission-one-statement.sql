-- Flow control's key gate (migration 013, platform/store/admissions.ts) in one statement each for the common
-- case, as the workspace cap's (migration 016): a run admitted at once, and a release with nobody queued
-- behind it, are one round trip instead of a transaction of several statements. Both take the key's advisory
-- lock first, with the same name as the transactions' (`admission:<workspace>:<workflow>:<-|=key>`), so they
-- serialize with them; in a volatile PL/pgSQL function every query after the lock takes a new snapshot and
-- sees every change committed under it. Anything else answers null and is left to the transactions.

-- Acquire: the existing row's state, or `opened` (a new row, open) when the key has a free place and nobody
-- queued; null when the run must queue or be granted in turn (the caller's transaction does that).
create function admission_try_open(
  p_execution_id text, p_workspace_id text, p_workflow_id text, p_key text, p_limit integer, p_priority integer
) returns text language plpgsql volatile as $$
declare
  v_state text;
  v_open integer;
begin
  perform pg_advisory_xact_lock(hashtextextended(
    'admission:' || p_workspace_id || ':' || p_workflow_id || ':' || coalesce('=' || p_key, '-'), 0));
  select a.state into v_state from admissions a where a.execution_id = p_execution_id;
  if found then
    return v_state;
  end if;
  -- Two forms, so that the key's index serves both (no index serves `is not distinct from`).
  if p_key is null then
    if exists (select 1 from admissions a where a.workspace_id = p_workspace_id
               and a.workflow_id = p_workflow_id and a.key is null and a.state = 'queued') then
      return null;
    end if;
    select count(*) into v_open from admissions a where a.workspace_id = p_workspace_id
      and a.workflow_id = p_workflow_id and a.key is null and a.state = 'open';
  else
    if exists (select 1 from admissions a where a.workspace_id = p_workspace_id
               and a.workflow_id = p_workflow_id and a.key = p_key and a.state = 'queued') then
      return null;
    end if;
    select count(*) into v_open from admissions a where a.workspace_id = p_workspace_id
      and a.workflow_id = p_workflow_id and a.key = p_key and a.state = 'open';
  end if;
  if v_open >= p_limit then
    return null;
  end if;
  insert into admissions (execution_id, workspace_id, workflow_id, key, concurrency_limit, priority, state,
                          admitted_at, signaled_at)
  values (p_execution_id, p_workspace_id, p_workflow_id, p_key, p_limit, p_priority, 'open', now(), now());
  return 'opened';
end $$;

-- Release: the run's throttle row and its admission row go; answers the row's key when runs are queued on it
-- (the caller's transaction grants them), no row otherwise (nobody to grant, or no row at all).
create function admission_release(p_execution_id text)
returns table (workspace_id text, workflow_id text, key text) language plpgsql volatile as $$
declare
  v_workspace text;
  v_workflow text;
  v_key text;
begin
  delete from throttle_waits t where t.execution_id = p_execution_id;
  select a.workspace_id, a.workflow_id, a.key into v_workspace, v_workflow, v_key
    from admissions a where a.execution_id = p_execution_id;
  if not found then
    return;
  end if;
  perform pg_advisory_xact_lock(hashtextextended(
    'admission:' || v_workspace || ':' || v_workflow || ':' || coalesce('=' || v_key, '-'), 0));
  delete from admissions a where a.execution_id = p_execution_id;
  if exists (select 1 from admissions a where a.workspace_id = v_workspace and a.workflow_id = v_workflow
             and a.key is not distinct from v_key and a.state = 'queued') then
    return query select v_workspace, v_workflow, v_key;
  end if;
end $$;
