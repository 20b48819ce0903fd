import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { connectDatabase, type Database } from '../../src/db/connect.js';
import { migrate } from '../../src/db/migrate.js';
import { openPooledPglite } from './pglite-pool.js';

export type Backend = 'pglite' | 'postgres';

/** PGlite always; PostgreSQL too when TEST_DATABASE_URL is set (CI sets it). */
export const BACKENDS: Backend[] = process.env.TEST_DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'];

/**
 * For suites whose subject is not SQL (git over SSH, the inspector, attestation verification by
 * the CLI, rendering): the statements they reach are the stores' and run on both backends in the
 * store, route and money suites, so a PostgreSQL leg doubled their minutes and not their coverage.
 * They run on the embedded default, whose single connection is the harder case for staying
 * responsive while a cut runs.
 */
export const PGLITE_ONLY: Backend[] = ['pglite'];

export interface TestDatabase extends Database {
  /** For PostgreSQL, the URL of this test's own database. */
  url?: string;
}

/**
 * A migrated database of its own: a PGlite in the template's state (test/support/pglite-pool.ts), or a new PostgreSQL database
 * (a copy of the run's template database when global setup made one) dropped on close.
 */
export async function openTestDatabase(backend: Backend): Promise<TestDatabase> {
  if (backend === 'pglite') {
    const template = process.env.REPO402_PGLITE_TEMPLATE;
    if (template) return openPooledPglite(template);
    const database = await connectDatabase({ kind: 'pglite-memory' });
    await migrate(database);
    return database;
  }
  const adminUrl = process.env.TEST_DATABASE_URL!;
  const name = `repo402_test_${randomBytes(6).toString('hex')}`;
  const template = process.env.REPO402_POSTGRES_TEMPLATE;
  await adminQuery(adminUrl, `create database ${name}${template ? ` template ${template}` : ''}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const database = await connectDatabase({ kind: 'postgres', url: url.toString(), poolSize: 5 });
  if (!template) await migrate(database);
  return {
    ...database,
    url: url.toString(),
    async close() {
      await database.close();
      await adminQuery(adminUrl, `drop database if exists ${name} with (force)`);
    },
  };
}

/** One statement on the server's admin database (create or drop a database). */
export async function adminQuery(url: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}
