-- Rate-limit counters shared by every API process on a PostgreSQL server (src/http/rate-limit.ts).
-- rate-limiter-flexible's RateLimiterPostgres reads and writes this table (tableCreated: true, so it never
-- creates one itself): the column names, their order and their types are the library's. `expire` is a
-- Unix time in milliseconds; rows expired for an hour are deleted by the library every 5 minutes.
-- Unlogged: a counter lost in a server crash only gives callers a fresh window, and skipping the WAL
-- keeps the upsert that every authenticated request makes cheap.
create unlogged table rate_limits (
  key text primary key,
  points integer not null default 0,
  expire bigint
);
