-- Events a workspace sends (docs/events.md, POST /v1/events). A row is committed before the request answers
-- 202; the API's event dispatcher (src/events/dispatcher.ts) then acts on it: it starts the executions of
-- event triggers (and wakes waiting executions). `dispatched_at` null: not acted on yet (the outbox).
-- An API process claims such rows by setting `lease_until` (FOR UPDATE SKIP LOCKED); a row whose lease
-- ran out (its process died) is claimed again. `attempts` counts claims, for the backoff after failures.
-- `seq` orders the lists (newest first) and their cursors.
-- (workspace_id, id) is unique: an id sent again within 24 h is the same event (nothing changes); sent
-- later, the row is reused for the new event.
create table events (
  workspace_id text not null references workspaces (id) on delete cascade,
  id text not null,
  seq bigserial not null,
  name text not null,
  data jsonb not null,
  -- CloudEvents attributes, when the event came as one.
  source text,
  subject text,
  received_at timestamptz not null default now(),
  dispatched_at timestamptz,
  lease_until timestamptz,
  attempts integer not null default 0,
  primary key (workspace_id, id)
);
create unique index events_list_idx on events (workspace_id, seq);
create index events_name_idx on events (workspace_id, name, seq);
create index events_undispatched_idx on events (received_at) where dispatched_at is null;
-- The housekeeping job deletes events by age (EVENT_RETENTION_DAYS).
create index events_received_idx on events (received_at);

-- What the event triggers did with an event: one row per workflow whose trigger matched, holding the
-- execution it started (its id is derived from the workspace, workflow and event id), or why it started
-- none (`error_code`: invalid_input, expression_error). The primary key makes the record, like the start,
-- happen once per workflow and event.
create table event_triggers (
  workspace_id text not null,
  event_id text not null,
  workflow_id text not null,
  execution_id text,
  error_code text,
  error_message text,
  created_at timestamptz not null default now(),
  primary key (workspace_id, event_id, workflow_id),
  foreign key (workspace_id, event_id) references events (workspace_id, id) on delete cascade,
  check ((execution_id is null) <> (error_code is null))
);

-- The waiting executions an event woke (wait_for_event): one row per waiting step and run.
create table event_wakes (
  workspace_id text not null,
  event_id text not null,
  execution_id text not null,
  step text not null,
  -- The run keys of the step's containers joined by "/"; '' at the top level.
  run text not null default '',
  woke_at timestamptz not null default now(),
  primary key (workspace_id, event_id, execution_id, step, run),
  foreign key (workspace_id, event_id) references events (workspace_id, id) on delete cascade
);

-- The workflows whose latest version has an event trigger, found by event name for each event.
create index workflow_versions_event_trigger_idx
  on workflow_versions (workspace_id, (definition #>> '{trigger,event}'))
  where definition #>> '{trigger,type}' = 'event';
