import { readFileSync } from 'node:fs';
import path from 'node:path';
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
  } else {
    await database.withAdvisoryLock(MIGRATION_LOCK_KEY, () =>
      migrateNodePg(database.db as unknown as NodePgDatabase, { migrationsFolder: MIGRATIONS_DIR }),
    );
  }
  await refuseNewerDatabase(database);
}

export class DatabaseNewerError extends Error {
  override name = 'DatabaseNewerError';
}

/**
 * Migrations only go forward: a version older than the one that last migrated the database would
 * run its code against columns it does not know (drizzle's migrator applies nothing and says
 * nothing). Refused at start instead, naming the way back (docs/OPERATIONS.md, "Upgrades and
 * rollbacks").
 */
async function refuseNewerDatabase(database: Database): Promise<void> {
  const applied = await appliedMigration(database);
  if (applied === null || !applied.startsWith('unknown')) return;
  const newest = migrationJournal().at(-1)?.tag;
  throw new DatabaseNewerError(
    `the database was migrated by a newer repo402 than this one (its last migration is not among this version's, the newest of which is ${newest}): ` +
      'run that version or a later one, or restore the backup taken before the upgrade',
  );
}

interface JournalEntry {
  idx: number;
  tag: string;
  when: number;
}

/** The committed migrations in order, as drizzle-kit's journal lists them. */
export function migrationJournal(): JournalEntry[] {
  const journal = JSON.parse(readFileSync(path.join(MIGRATIONS_DIR, 'meta', '_journal.json'), 'utf8')) as {
    entries: JournalEntry[];
  };
  return journal.entries;
}

/**
 * The name (`0020_devnet_faucet`) of the newest migration applied to the database, `null` when
 * none is; drizzle records each one's journal time, which names it.
 */
export async function appliedMigration(database: Database): Promise<string | null> {
  const { rows: present } = await database.query<{ present: boolean }>(
    `select to_regclass('drizzle.__drizzle_migrations') is not null as present`,
  );
  if (!present[0]?.present) return null;
  const { rows } = await database.query<{ created_at: string }>(
    `select created_at::text from drizzle.__drizzle_migrations order by created_at desc limit 1`,
  );
  const last = rows[0];
  if (!last) return null;
  return (
    migrationJournal().find((entry) => String(entry.when) === last.created_at)?.tag ??
    `unknown (${last.created_at})`
  );
}
