-- Workspace secrets, encrypted at rest (AES-256-GCM with a key derived from SECRETS_KEY).
create table secrets (
  workspace_id text not null references workspaces (id) on delete cascade,
  name text not null,
  -- base64 of iv (12 bytes) || auth tag (16 bytes) || ciphertext
  sealed text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (workspace_id, name)
);
