import { fileURLToPath } from 'node:url';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import { migrate as migrateNodePg } from 'drizzle-orm/node-postgres/migrator';
import type { PgliteDatabase } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import type { Database } from './connect.js';

// Resolves to src/db/migrations from both src/db (tests) and dist/db (the built CLI).
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../src/db/migrations', import.meta.url));

/** Any fixed 64-bit key; it only has to be the same in every repo402 process. */
const MIGRATION_LOCK_KEY = 4020402;

/**
 * Applies the committed SQL migrations. On PostgreSQL several processes may start at once, so the
 * run is serialised with an advisory lock; PGlite is single-process by construction.
 */
export async function migrate(database: Database): Promise<void> {
  if (database.driver === 'pglite') {
    await migratePglite(database.db as unknown as PgliteDatabase, { migrationsFolder: MIGRATIONS_DIR });
    return;
  }
  await database.withAdvisoryLock(MIGRATION_LOCK_KEY, () =>
    migrateNodePg(database.db as unknown as NodePgDatabase, { migrationsFolder: MIGRATIONS_DIR }),
  );
}
