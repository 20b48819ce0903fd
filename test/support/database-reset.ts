/**
 * Emptying a used test database back to the template's state, so the next test can take it
 * instead of a new one: PGlite instances (test/support/pglite-pool.ts) and PostgreSQL databases
 * (test/support/db.ts) are pooled per worker and reset here alike.
 *
 * Rows go by `delete`, with triggers off (`session_replication_role = replica`: the append-only
 * triggers would refuse, and foreign keys need no order): on PostgreSQL `truncate` of the 34 tables
 * made new files for each and took 0.6-1.7 s, where deleting the few rows a test wrote takes
 * milliseconds. Sequences restart; queues a test created are deleted. A database whose schema no
 * longer matches the template's afterwards is not reused.
 */

/** What both PGlite and a node-postgres client offer; `script` runs several statements at once. */
export interface SqlSession {
  query<T>(text: string, params?: unknown[]): Promise<{ rows: T[] }>;
  script(text: string): Promise<unknown>;
}

export interface Shape {
  /** Every relation and function of our schemas, and pg-boss's queues: what reset must restore. */
  fingerprint: string;
  /** Tables emptied by reset: every table but the migration log and pg-boss's version and queues. */
  tables: string[];
  queues: string[];
  /** Restarted by reset; a sequence a test created changes the fingerprint instead. */
  sequences: string[];
}

const FINGERPRINT = `
  select string_agg(n.nspname || '.' || c.relname || ':' || c.relkind::text, ',' order by n.nspname, c.relname) as relations,
    (select string_agg(p.proname, ',' order by p.proname) from pg_proc p
       join pg_namespace pn on pn.oid = p.pronamespace where pn.nspname in ('public', 'pgboss')) as functions
  from pg_class c join pg_namespace n on n.oid = c.relnamespace
  where n.nspname in ('public', 'pgboss', 'drizzle')`;

async function fingerprintOf(session: SqlSession): Promise<string> {
  const row = (await session.query<{ relations: string; functions: string }>(FINGERPRINT)).rows[0]!;
  return `${row.relations}|${row.functions}`;
}

export async function shapeOf(session: SqlSession): Promise<Shape> {
  const fingerprint = await fingerprintOf(session);
  const tables = await session.query<{ name: string }>(`
    select format('%I.%I', schemaname, tablename) as name from pg_tables
    where schemaname in ('public', 'pgboss')
      and not (schemaname = 'pgboss' and tablename in ('version', 'queue'))
      and tablename not in (select c.relname from pg_inherits i join pg_class c on c.oid = i.inhrelid)
    order by 1`);
  const queues = await session.query<{ name: string }>('select name from pgboss.queue order by name');
  const sequences = await session.query<{ name: string }>(
    `select format('%I.%I', schemaname, sequencename) as name from pg_sequences
     where schemaname in ('public', 'pgboss') order by 1`,
  );
  return {
    fingerprint,
    tables: tables.rows.map((r) => r.name),
    queues: queues.rows.map((r) => r.name),
    sequences: sequences.rows.map((r) => r.name),
  };
}

/** Empties the database back to the template's state; false when it cannot be (then drop it). */
export async function resetDatabase(session: SqlSession, shape: Shape): Promise<boolean> {
  try {
    const extra = (await session.query<{ name: string }>('select name from pgboss.queue')).rows
      .map((r) => r.name)
      .filter((name) => !shape.queues.includes(name));
    for (const name of extra) await session.query('select pgboss.delete_queue($1)', [name]);
    await session.script(
      [
        'begin',
        'set local session_replication_role = replica',
        ...shape.tables.map((table) => `delete from ${table}`),
        ...shape.sequences.map((name) => `alter sequence ${name} restart`),
        'commit',
      ].join(';\n'),
    );
    return (await fingerprintOf(session)) === shape.fingerprint;
  } catch {
    return false;
  }
}
