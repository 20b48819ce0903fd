import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { connectDatabase, type Database } from '../../src/db/connect.js';
import { migrate } from '../../src/db/migrate.js';
import { resetDatabase, type Shape, type SqlSession, shapeOf } from './database-reset.js';
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
 * A migrated database of its own, in the template's state: a pooled PGlite
 * (test/support/pglite-pool.ts) or a pooled PostgreSQL database.
 */
export async function openTestDatabase(backend: Backend): Promise<TestDatabase> {
  if (backend === 'pglite') {
    const template = process.env.REPO402_PGLITE_TEMPLATE;
    if (template) return openPooledPglite(template);
    const database = await connectDatabase({ kind: 'pglite-memory' });
    await migrate(database);
    return database;
  }
  return openPooledPostgres();
}

/** PostgreSQL databases of this worker that a closed test gave back, reset, for the next test. */
const idlePostgres: string[] = [];
const MAX_IDLE_POSTGRES = 4;
let postgresShape: Promise<Shape> | undefined;

/** Names carry the run's prefix (set by global setup), so its teardown drops what workers kept. */
const newDatabaseName = () =>
  `${process.env.REPO402_TEST_DATABASE_PREFIX ?? 'repo402_test_'}${randomBytes(6).toString('hex')}`;

const urlOf = (name: string) => {
  const url = new URL(process.env.TEST_DATABASE_URL!);
  url.pathname = `/${name}`;
  return url.toString();
};

/** One client on `name`, for resetting or reading its shape. */
async function withSession<T>(name: string, run: (session: SqlSession) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: urlOf(name) });
  await client.connect();
  try {
    return await run({
      query: async <T>(text: string, params?: unknown[]) => ({
        rows: (await client.query(text, params)).rows as T[],
      }),
      script: (text) => client.query(text),
    });
  } finally {
    await client.end();
  }
}

/**
 * A database made from the run's template (global setup), or migrated when there is none; reused
 * after a reset when an earlier test of this worker gave one back (creating one from the template
 * and dropping it took about half a second per test).
 */
async function openPooledPostgres(): Promise<TestDatabase> {
  const adminUrl = process.env.TEST_DATABASE_URL!;
  const template = process.env.REPO402_POSTGRES_TEMPLATE;
  let name = idlePostgres.pop();
  if (!name) {
    name = newDatabaseName();
    await adminQuery(adminUrl, `create database ${name}${template ? ` template ${template}` : ''}`);
  }
  const url = urlOf(name);
  const database = await connectDatabase({ kind: 'postgres', url, poolSize: 5 });
  if (!template) await migrate(database);
  const given = name;
  // The template's shape, read from the first fresh copy (a session on the template itself would
  // stop other workers copying it).
  postgresShape ??= withSession(given, shapeOf);
  const shape = await postgresShape;
  let closed = false;
  return {
    ...database,
    url,
    async close() {
      if (closed) return;
      closed = true;
      await database.close();
      // Processes a test started on this database may still hold sessions: they end here.
      await adminQuery(
        adminUrl,
        `select pg_terminate_backend(pid) from pg_stat_activity where datname = '${given}' and pid <> pg_backend_pid()`,
      );
      const reusable =
        idlePostgres.length < MAX_IDLE_POSTGRES && (await withSession(given, (s) => resetDatabase(s, shape)));
      if (reusable) idlePostgres.push(given);
      else await adminQuery(adminUrl, `drop database if exists ${given} with (force)`);
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
