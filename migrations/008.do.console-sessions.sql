-- Sessions of the web console (src/console/sessions.ts). Signing in with an API key creates one; the
-- browser holds its token in an HttpOnly cookie, so a script in the page never sees the key or the token.
-- Only a SHA-256 of the token is stored. A session acts with its key's scopes, read on every request
-- through the join, so revoking the key ends its sessions at once. Expired rows are deleted at sign-in.
create table console_sessions (
  id text primary key,
  token_hash text not null unique,
  key_id text not null references api_keys (id) on delete cascade,
  -- Sent back by the console in X-CSRF-Token on every request that changes something.
  csrf_token text not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null
);
create index console_sessions_expires_idx on console_sessions (expires_at);
create index console_sessions_key_idx on console_sessions (key_id);
