-- Inbound hook signing secrets (CONTRACT §7): one per workflow with a webhook trigger, sealed at rest.
create table hook_secrets (
  workspace_id text not null,
  workflow_id text not null,
  sealed text not null,
  created_at timestamptz not null default now(),
  primary key (workspace_id, workflow_id),
  foreign key (workspace_id, workflow_id) references workflows (workspace_id, id) on delete cascade
);
