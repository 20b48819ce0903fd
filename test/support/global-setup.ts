import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { fromPglite } from '../../src/db/connect.js';
import { migrate } from '../../src/db/migrate.js';
import { JobQueue } from '../../src/platform/jobs.js';
import { createLogger } from '../../src/platform/logger.js';

/** The web app's bundle, from the current source: the app tests serve what `npm run build` would. */
function buildWebApp(): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['scripts/build-web.mjs'], (error, _stdout, stderr) =>
      error ? reject(new Error(`building the web app failed: ${stderr}`)) : resolve(),
    );
  });
}

/**
 * A fresh PGlite takes seconds to initialise; loading a migrated snapshot takes a fraction of
 * that. Build the snapshot once per run; every test database starts from a copy of it.
 */
export default async function setup() {
  const web = buildWebApp();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'repo402-template-'));
  const client = new PGlite();
  const database = fromPglite(client);
  await migrate(database);
  // pg-boss installs its schema on first start; doing it here keeps that out of every test.
  const queue = await JobQueue.open(database, [], createLogger('silent'));
  await queue.stop(0);
  const dump = await client.dumpDataDir('none');
  const file = path.join(dir, 'template.tar');
  await writeFile(file, Buffer.from(await dump.arrayBuffer()));
  await database.close();
  process.env.REPO402_PGLITE_TEMPLATE = file;
  await web;
  return async () => {
    await rm(dir, { recursive: true, force: true });
  };
}
