-- Token buckets shared by every API process on a PostgreSQL server (src/http/rate-limit.ts, CONTRACT §8):
-- one row per limited key ("api-key:<key id>", "hook:<workspace>/<workflow>"). `tokens` is the bucket's
-- level at `updated_at` (the database's clock, so every process agrees); one statement per request
-- refills it by the time since then, takes a token when there is one and says in `allowed` whether it did
-- (RETURNING sees only the new row). A row whose bucket would be full again carries no information: the
-- limiter deletes those. No index besides the key's, so each request's update stays a HOT update.
-- Unlogged: a bucket lost in a server crash only gives callers a full bucket, and skipping the WAL keeps
-- the upsert that every authenticated request makes cheap.
create unlogged table rate_limits (
  key text primary key,
  tokens double precision not null,
  allowed boolean not null,
  updated_at timestamptz not null
);
