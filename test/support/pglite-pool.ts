import { readFile } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import { type Database, fromPglite } from '../../src/db/connect.js';

/**
 * Loading the migrated template into a new PGlite takes seconds (41 MB untarred into memory, then
 * PostgreSQL starts), and most test files open one per test on each of two workers: on the CI
 * machine that was most of the suite's time. A closed test database instead hands its PGlite back
 * here, emptied to the template's state, and the worker's next test takes it.
 *
 * Each checkout sees the instance through a guard that refuses every call once the checkout is
 * closed, so work a test left running (a job, a timer) can never write into the next test's
 * database. An instance whose reset fails, or whose schema no longer matches the template's, is
 * closed instead of reused.
 */

/** At most this many idle instances per worker (each holds a few hundred MB). */
const MAX_IDLE = 2;
const idle: PGlite[] = [];
let template: Promise<{ data: Blob; shape: Shape }> | undefined;

interface Shape {
  /** Every relation and function of our schemas, and pg-boss's queues: what reset must restore. */
  fingerprint: string;
  /** Tables emptied by reset: every table but the migration log and pg-boss's version and queues. */
  tables: string[];
  queues: string[];
}

const FINGERPRINT = `
  select string_agg(n.nspname || '.' || c.relname || ':' || c.relkind::text, ',' order by n.nspname, c.relname) as relations,
    (select string_agg(p.proname, ',' order by p.proname) from pg_proc p
       join pg_namespace pn on pn.oid = p.pronamespace where pn.nspname in ('public', 'pgboss')) as functions
  from pg_class c join pg_namespace n on n.oid = c.relnamespace
  where n.nspname in ('public', 'pgboss', 'drizzle')`;

async function shapeOf(client: PGlite): Promise<Shape> {
  const [fingerprint, tables, queues] = await Promise.all([
    client.query<{ relations: string; functions: string }>(FINGERPRINT),
    client.query<{ name: string }>(`
      select format('%I.%I', schemaname, tablename) as name from pg_tables
      where schemaname in ('public', 'pgboss')
        and not (schemaname = 'pgboss' and tablename in ('version', 'queue'))
        and tablename not in (select c.relname from pg_inherits i join pg_class c on c.oid = i.inhrelid)
      order by 1`),
    client.query<{ name: string }>('select name from pgboss.queue order by name'),
  ]);
  const row = fingerprint.rows[0]!;
  return {
    fingerprint: `${row.relations}|${row.functions}`,
    tables: tables.rows.map((r) => r.name),
    queues: queues.rows.map((r) => r.name),
  };
}

function loadTemplate(file: string) {
  template ??= (async () => {
    const data = new Blob([await readFile(file)]);
    const client = new PGlite({ loadDataDir: data });
    const shape = await shapeOf(client);
    idle.push(client);
    return { data, shape };
  })();
  return template;
}

/** Empties the instance back to the template's state; false when it cannot be (then it is closed). */
async function reset(client: PGlite, shape: Shape): Promise<boolean> {
  try {
    const extra = (await client.query<{ name: string }>('select name from pgboss.queue')).rows
      .map((r) => r.name)
      .filter((name) => !shape.queues.includes(name));
    for (const name of extra) await client.query('select pgboss.delete_queue($1)', [name]);
    await client.exec(`truncate ${shape.tables.join(', ')} restart identity cascade`);
    return (await shapeOf(client)).fingerprint === shape.fingerprint;
  } catch {
    return false;
  }
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
  const client = idle.pop() ?? new PGlite({ loadDataDir: data });
  let closed = false;
  const giveBack = async () => {
    if (closed) return;
    closed = true;
    if (idle.length < MAX_IDLE && (await reset(client, shape))) idle.push(client);
    else await client.close();
  };
  return fromPglite(guard(client, () => closed, giveBack));
}
