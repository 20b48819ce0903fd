import { access, cp, mkdir } from 'node:fs/promises';
import path from 'node:path';

/**
 * Makes `dir` an embedded database directory as a first start leaves it, copied from the one global
 * setup made, unless `dir` exists. For tests whose subject is not a new database: PGlite's initdb
 * takes 5-20 s of a process of its own, and under a full run's load pushed tests past their
 * timeouts. A new data directory's first start stays tested (test/db/database.test.ts, test/cli.test.ts).
 */
export async function seedEmbeddedDatabase(dir: string): Promise<void> {
  const initialised = process.env.REPO402_PGLITE_INITIALISED;
  if (!initialised) return;
  const exists = await access(dir).then(
    () => true,
    () => false,
  );
  if (exists) return;
  // As the server makes DATA_DIR when it makes the database.
  await mkdir(path.dirname(dir), { recursive: true, mode: 0o700 });
  await cp(initialised, dir, { recursive: true });
}
