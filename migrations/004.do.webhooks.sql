-- Outbound webhooks (CONTRACT §6): endpoints, one delivery per (event, endpoint), every attempt logged.
create table webhook_endpoints (
  id text primary key,
  workspace_id text not null references workspaces (id) on delete cascade,
  url text not null,
  events text[] not null,
  description text,
  status text not null default 'enabled',
  -- the whsec_ signing secret, sealed like workspace secrets
  sealed_secret text not null,
  created_at timestamptz not null default now(),
  disabled_at timestamptz
);
create index webhook_endpoints_workspace_idx on webhook_endpoints (workspace_id, created_at, id);

create table webhook_deliveries (
  id text primary key,
  workspace_id text not null,
  endpoint_id text not null references webhook_endpoints (id) on delete cascade,
  event_id text not null,
  event text not null,
  execution_id text not null,
  payload jsonb not null,
  status text not null default 'pending',
  next_attempt_at timestamptz,
  created_at timestamptz not null default now(),
  unique (endpoint_id, event_id)
);
create index webhook_deliveries_endpoint_idx on webhook_deliveries (endpoint_id, created_at desc, id desc);

create table webhook_delivery_attempts (
  id bigserial primary key,
  delivery_id text not null references webhook_deliveries (id) on delete cascade,
  at timestamptz not null,
  status_code integer,
  duration_ms integer not null,
  error text
);
create index webhook_delivery_attempts_delivery_idx on webhook_delivery_attempts (delivery_id, id);
