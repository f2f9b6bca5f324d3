-- The wait_for_event steps now waiting (docs/events.md#waiting-for-an-event): one row per waiting step and
-- Temporal run. The step's `run_steps` activity files the row when the wait begins (`began_at`: only events
-- received from then on match); the API's event dispatcher (src/events/wake.ts) finds an event's waiters by
-- (workspace, name, key_path, key_value), claims a waiter by setting `woken_by` (so one event wakes it), and
-- signals its run; the run's `end_event_wait` activity sets `ended_at` as it stops waiting, woken or not.
-- Ended rows, and rows long past `until` (their run was canceled or is gone), go with the housekeeping job.
--
-- `key_path` and `key_value` index the common match `event.data.order_id = input.order_id`: the event's
-- side as a path into the event, the other side's value (JSON) when the wait began (core/expressions/
-- match-key.ts). '' and null: the match has no such equality, and the waiter is tried on every event of
-- its name. `context` is what `match` reads of the step's context (input, outputs of earlier steps), sealed
-- with SECRETS_KEY as secrets are (platform/store/event-waiters.ts): step data stays unreadable at rest.
create table event_waiters (
  workflow_id text not null,
  run_id text not null,
  step_key text not null,
  workspace_id text not null references workspaces (id) on delete cascade,
  execution_id text not null,
  step_id text not null,
  -- The run keys of the step's containers joined by "/"; '' at the top level (as event_wakes.run).
  run text not null,
  event_name text not null,
  key_path text not null,
  key_value text,
  match text,
  context text not null,
  began_at timestamptz not null default now(),
  until timestamptz not null,
  woken_by text,
  woken_at timestamptz,
  ended_at timestamptz,
  primary key (workflow_id, run_id, step_key)
);
-- An event's waiters by its name and the value at each key path; its name's key paths (a loose index scan).
create index event_waiters_lookup_idx
  on event_waiters (workspace_id, event_name, key_path, key_value)
  where ended_at is null;
-- The housekeeping job: rows ended, or past their time.
create index event_waiters_ended_idx on event_waiters (ended_at) where ended_at is not null;
create index event_waiters_until_idx on event_waiters (until);
