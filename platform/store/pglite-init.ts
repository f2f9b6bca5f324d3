/**
 * Creates an embedded database cluster (PGlite's initdb) in the folder given as argument, then exits.
 * Run as a child process by db.ts on a first start: initdb's WebAssembly memory (a few hundred MB) goes
 * away with the process, instead of staying in the service's for as long as it runs.
 */
import { PGlite } from '@electric-sql/pglite';

async function main(): Promise<void> {
  const directory = process.argv[2];
  if (!directory) throw new Error('usage: pglite-init <data folder>');
  const db = await PGlite.create(directory);
  await db.close();
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
