/**
 * PGlite is a single-process database: two processes opening the same files would corrupt them. The
 * process that owns DATA_DIR's embedded database holds this lock file (its pid); others connect through
 * its socket (`npm run admin`) or refuse to start with a clear message.
 */
import fs from 'node:fs';
import path from 'node:path';

export const lockFile = (dataDir: string): string => path.join(dataDir, 'switchyard.pid');

/** The pid of the live process holding the lock, if any. */
export function lockHolder(dataDir: string): number | undefined {
  let pid: number;
  try {
    pid = Number(fs.readFileSync(lockFile(dataDir), 'utf8').trim());
  } catch {
    return undefined;
  }
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    process.kill(pid, 0);
    return pid;
  } catch (error) {
    // EPERM: alive but not ours to signal.
    return (error as NodeJS.ErrnoException).code === 'EPERM' ? pid : undefined;
  }
}

/** Takes the lock (replacing a stale one); returns its release function. */
export function acquireDataDirLock(dataDir: string): () => void {
  fs.mkdirSync(dataDir, { recursive: true });
  const holder = lockHolder(dataDir);
  if (holder !== undefined && holder !== process.pid) {
    throw new Error(
      `The embedded database in ${dataDir} is in use by process ${holder}. Stop it first, use another DATA_DIR, ` +
        'or set DATABASE_URL to share a PostgreSQL server between processes.',
    );
  }
  fs.writeFileSync(lockFile(dataDir), String(process.pid));
  return () => {
    if (lockHolder(dataDir) === process.pid) fs.rmSync(lockFile(dataDir), { force: true });
  };
}

/** Where the owning process serves its embedded database to `npm run admin` (a PostgreSQL-style socket). */
export const PGLITE_SOCKET_PORT = 5432;
export const pgliteSocketPath = (dataDir: string): string =>
  path.join(dataDir, `.s.PGSQL.${PGLITE_SOCKET_PORT}`);
/** Unix socket paths are limited to about 107 bytes. */
export const canServeSocket = (dataDir: string): boolean =>
  Buffer.byteLength(pgliteSocketPath(dataDir)) < 100;
