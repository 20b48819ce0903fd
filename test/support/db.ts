import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import pg from 'pg';
import { connectDatabase, type Database } from '../../src/db/connect.js';
import { migrate } from '../../src/db/migrate.js';

export type Backend = 'pglite' | 'postgres';

/** PGlite always; PostgreSQL too when TEST_DATABASE_URL is set (CI sets it). */
export const BACKENDS: Backend[] = process.env.TEST_DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'];

export interface TestDatabase extends Database {
  /** For PostgreSQL, the URL of this test's own database. */
  url?: string;
}

/** A migrated database of its own: a PGlite copy of the template, or a new PostgreSQL database dropped on close. */
export async function openTestDatabase(backend: Backend): Promise<TestDatabase> {
  if (backend === 'pglite') {
    const template = process.env.REPO402_PGLITE_TEMPLATE;
    const loadDataDir = template ? new Blob([await readFile(template)]) : undefined;
    const database = await connectDatabase({ kind: 'pglite-memory', loadDataDir });
    if (!template) await migrate(database);
    return database;
  }
  const adminUrl = process.env.TEST_DATABASE_URL!;
  const name = `repo402_test_${randomBytes(6).toString('hex')}`;
  await withAdmin(adminUrl, (client) => client.query(`create database ${name}`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const database = await connectDatabase({ kind: 'postgres', url: url.toString(), poolSize: 5 });
  await migrate(database);
  return {
    ...database,
    url: url.toString(),
    async close() {
      await database.close();
      await withAdmin(adminUrl, (client) => client.query(`drop database if exists ${name} with (force)`));
    },
  };
}

async function withAdmin<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}
