import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { build } from 'esbuild';
import pg from 'pg';
import { connectDatabase, type Database, fromPglite } from '../../src/db/connect.js';
import { migrate } from '../../src/db/migrate.js';
import { initPgliteDataDir } from '../../src/db/pglite-memory.js';
import { JobQueue } from '../../src/platform/jobs.js';
import { createLogger } from '../../src/platform/logger.js';
import { adminQuery } from './db.js';
import { ROOT } from './process.js';

/** The web app's bundle, from the current source: the app tests serve what `npm run build` would. */
function buildWebApp(): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['scripts/build-web.mjs'], (error, _stdout, stderr) =>
      error ? reject(new Error(`building the web app failed: ${stderr}`)) : resolve(),
    );
  });
}

/**
 * The service's source as plain JavaScript, for the tests that start repo402 in child processes
 * (test/support/process.ts): node loads it in half the time it takes through tsx's loader (3.3 s
 * against 1.6 s for the server), and some hundred processes start per run. esbuild transforms each
 * file alone, as tsx does, into a folder beside `src` so paths relative to a module still resolve.
 */
async function transpileSource(): Promise<string> {
  const outdir = path.join(ROOT, '.test-build');
  await rm(outdir, { recursive: true, force: true });
  const files = (await readdir(path.join(ROOT, 'src'), { recursive: true }))
    .filter((file) => /\.tsx?$/.test(file) && !file.startsWith(`web${path.sep}`))
    .map((file) => path.join(ROOT, 'src', file));
  await build({
    entryPoints: files,
    outdir,
    outbase: path.join(ROOT, 'src'),
    bundle: false,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    sourcemap: 'inline',
    logLevel: 'warning',
  });
  return path.join(outdir, 'cli.js');
}

/** Migrations, then pg-boss's schema (it installs it on first start): what every test database starts from. */
async function prepare(database: Database): Promise<void> {
  await migrate(database);
  const queue = await JobQueue.open(database, [], createLogger('silent'));
  await queue.stop(0);
}

/**
 * A fresh PGlite takes seconds to initialise; loading a migrated snapshot takes a fraction of
 * that. Build the snapshot once per run; every test database starts from a copy of it.
 */
async function pgliteTemplate(dir: string): Promise<string> {
  const client = new PGlite();
  const database = fromPglite(client);
  await prepare(database);
  const dump = await client.dumpDataDir('none');
  const file = path.join(dir, 'template.tar');
  await writeFile(file, Buffer.from(await dump.arrayBuffer()));
  await database.close();
  return file;
}

/**
 * PostgreSQL copies a template database in a fifth of the time migrating a new one takes, and
 * hundreds of test databases are made per run. Returns the template's name, or undefined without
 * TEST_DATABASE_URL.
 */
async function postgresTemplate(): Promise<string | undefined> {
  const adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) return undefined;
  const name = `repo402_template_${randomBytes(6).toString('hex')}`;
  await adminQuery(adminUrl, `create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const database = await connectDatabase({ kind: 'postgres', url: url.toString(), poolSize: 2 });
  await prepare(database);
  await database.close();
  return name;
}

/** Drops `names` and every database whose name starts with `prefix`. */
async function dropDatabases(adminUrl: string, names: string[], prefix: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const pooled = await client.query<{ datname: string }>(
      'select datname from pg_database where starts_with(datname, $1)',
      [prefix],
    );
    for (const name of [...names, ...pooled.rows.map((row) => row.datname)]) {
      await client.query(`drop database if exists ${name} with (force)`);
    }
  } finally {
    await client.end();
  }
}

/**
 * An embedded data directory as the first start leaves it before migrating (PGlite's initdb, 5-20 s
 * in a process of its own): tests whose subject is not a new database copy it (test/support/db.ts).
 */
async function pgliteInitialised(dir: string): Promise<string> {
  const target = path.join(dir, 'initialised');
  await initPgliteDataDir(target);
  return target;
}

export default async function setup() {
  const web = buildWebApp();
  process.env.REPO402_TRANSPILED_CLI = await transpileSource();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'repo402-template-'));
  const [pglite, postgres, initialised] = await Promise.all([
    pgliteTemplate(dir),
    postgresTemplate(),
    pgliteInitialised(dir),
  ]);
  process.env.REPO402_PGLITE_TEMPLATE = pglite;
  process.env.REPO402_PGLITE_INITIALISED = initialised;
  if (postgres) process.env.REPO402_POSTGRES_TEMPLATE = postgres;
  // Workers keep reset databases for their next tests (test/support/db.ts); all carry this prefix.
  const prefix = `repo402_test_${randomBytes(4).toString('hex')}_`;
  process.env.REPO402_TEST_DATABASE_PREFIX = prefix;
  await web;
  return async () => {
    await rm(dir, { recursive: true, force: true });
    if (postgres) await dropDatabases(process.env.TEST_DATABASE_URL!, [postgres], prefix);
  };
}
