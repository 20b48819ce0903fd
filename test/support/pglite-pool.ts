import { readFile } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import { type Database, fromPglite } from '../../src/db/connect.js';
import { compileWasmOnMainThread, PGLITE_OPTIONS } from '../../src/db/pglite-memory.js';
import { resetDatabase, type Shape, type SqlSession, shapeOf } from './database-reset.js';

/**
 * Loading the migrated template into a new PGlite takes seconds (41 MB untarred into memory, then
 * PostgreSQL starts), and most test files open one per test on each of two workers: on the CI
 * machine that was most of the suite's time. A closed test database instead hands its PGlite back
 * here, emptied to the template's state, and the worker's next test takes it.
 *
 * Each checkout sees the instance through a guard that refuses every call once the checkout is
 * closed, so work a test left running (a job, a timer) can never write into the next test's
 * database. An instance that cannot be reset (test/support/database-reset.ts) is closed instead.
 */

/** At most this many idle instances per worker (each holds a few hundred MB). */
const MAX_IDLE = 2;
const idle: PGlite[] = [];
let template: Promise<{ data: Blob; shape: Shape }> | undefined;

const session = (client: PGlite): SqlSession => ({
  query: (text, params) => client.query(text, params),
  script: (text) => client.exec(text),
});

function loadTemplate(file: string) {
  template ??= (async () => {
    const data = new Blob([await readFile(file)]);
    compileWasmOnMainThread();
    const client = new PGlite({ loadDataDir: data, ...PGLITE_OPTIONS });
    const shape = await shapeOf(session(client));
    idle.push(client);
    return { data, shape };
  })();
  return template;
}

/** Every method refuses once `closed()`; `close` itself hands the instance back instead of ending it. */
function guard(client: PGlite, closed: () => boolean, giveBack: () => Promise<void>): PGlite {
  return new Proxy(client, {
    get(target, property) {
      if (property === 'close') return giveBack;
      const value = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (closed()) return Promise.reject(new Error('this test database is closed'));
        return value.apply(target, args);
      };
    },
  });
}

/** A test database on a pooled PGlite that starts in the template's state. */
export async function openPooledPglite(templateFile: string): Promise<Database> {
  const { data, shape } = await loadTemplate(templateFile);
  const client = idle.pop() ?? new PGlite({ loadDataDir: data, ...PGLITE_OPTIONS });
  let closed = false;
  const giveBack = async () => {
    if (closed) return;
    closed = true;
    if (idle.length < MAX_IDLE && (await resetDatabase(session(client), shape))) idle.push(client);
    else await client.close();
  };
  return fromPglite(guard(client, () => closed, giveBack));
}
