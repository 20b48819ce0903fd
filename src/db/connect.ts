import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { PGlite, parse, protocol } from '@electric-sql/pglite';
import type { SQL } from 'drizzle-orm';
import { drizzle as drizzleNodePg } from 'drizzle-orm/node-postgres';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import pg from 'pg';
import { LockHeldError, lockDataDir } from './data-dir-lock.js';
import { checkpointWhenWalGrows } from './pglite-checkpoints.js';
import { compileWasmOnMainThread, initPgliteDataDir, PGLITE_OPTIONS } from './pglite-memory.js';
import * as schema from './schema/index.js';
import { parameterText, type Statement } from './statement.js';

export type Schema = typeof schema;
/** The query builder every store uses; the same on PGlite and PostgreSQL. */
export type Db = PgDatabase<PgQueryResultHKT, Schema>;

/**
 * Runs a hand-written statement (one the query builder cannot express) and returns its rows:
 * node-postgres and PGlite's drizzle drivers answer `db.execute` with different shapes.
 */
export async function selectRows<T>(db: Db, query: SQL): Promise<T[]> {
  const result: unknown = await db.execute(query);
  return Array.isArray(result) ? (result as T[]) : ((result as { rows?: T[] }).rows ?? []);
}

export type DatabaseTarget =
  | { kind: 'postgres'; url: string; poolSize?: number }
  | { kind: 'pglite'; dataDir: string }
  | { kind: 'pglite-memory'; loadDataDir?: Blob };

export interface Database {
  readonly driver: 'pglite' | 'postgres';
  readonly db: Db;
  /** Parameterless, possibly multi-statement SQL (schema set-up by libraries such as pg-boss); rows of the last statement. */
  execScript<T = Record<string, unknown>>(text: string): Promise<{ rows: T[] }>;
  /** Parameterised single statement, for libraries that bring their own SQL. */
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<{ rows: T[] }>;
  /** A hot-path statement (`statement.ts`), prepared once per connection, with its parameters. */
  run<Row>(statement: Statement<Row>, params: unknown[]): Promise<Row[]>;
  /**
   * Runs `fn` while holding a cluster-wide lock on `key`, so only one process does it at a time
   * (migrations, sweeps). PGlite has one process by construction and only serialises.
   */
  withAdvisoryLock<T>(key: number, fn: () => Promise<T>): Promise<T>;
  /** True when the database answers `select 1` within the timeout. */
  ping(timeoutMs?: number): Promise<boolean>;
  /**
   * Delivers `NOTIFY channel` payloads from every process on this database until the returned
   * function is called; `'all'` after a lost connection is back, as notices may have been missed.
   * PGlite has one process by construction: there is nobody else to hear from.
   */
  listen(channel: string, onNotice: (payload: string | 'all') => void): Promise<() => Promise<void>>;
  /**
   * The embedded database's files as one tar (PGlite's `dumpDataDir`), taken while no statement or
   * transaction runs, so it is the image a clean stop would leave; absent on PostgreSQL (pg_dump).
   */
  dumpEmbedded?(): Promise<Blob>;
  close(): Promise<void>;
}

export class DatabaseBusyError extends Error {
  constructor(dataDir: string) {
    super(
      `The embedded database in ${dataDir} is in use by another repo402 process. ` +
        'Stop it, or run this command while it is running so the command goes through its control socket.',
    );
    this.name = 'DatabaseBusyError';
  }
}

export async function connectDatabase(target: DatabaseTarget): Promise<Database> {
  if (target.kind === 'postgres') return connectPostgres(target.url, target.poolSize ?? 10);
  return connectPglite(target);
}

async function connectPostgres(url: string, poolSize: number): Promise<Database> {
  const pool = new pg.Pool({ connectionString: url, max: poolSize, connectionTimeoutMillis: 5000 });
  // An idle client that loses its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  const db = drizzleNodePg({ client: pool, schema }) as unknown as Db;
  let closed = false;
  return {
    driver: 'postgres',
    db,
    async execScript<T>(text: string) {
      const result = (await pool.query(text)) as unknown as pg.QueryResult | pg.QueryResult[];
      const last = Array.isArray(result) ? result.at(-1) : result;
      return { rows: (last?.rows ?? []) as T[] };
    },
    async query(text, params) {
      const result = await pool.query(text, params as unknown[]);
      return { rows: result.rows };
    },
    async run<Row>(statement: Statement<Row>, params: unknown[]) {
      const values = params.map(parameterText);
      const result = await pool.query({ name: statement.name, text: statement.text, values });
      return result.rows as Row[];
    },
    async withAdvisoryLock(key, fn) {
      // Session-level locks belong to one connection: hold a dedicated client for lock and unlock.
      const client = await pool.connect();
      try {
        await client.query('select pg_advisory_lock($1)', [key]);
        try {
          return await fn();
        } finally {
          await client.query('select pg_advisory_unlock($1)', [key]);
        }
      } finally {
        client.release();
      }
    },
    ping: (timeoutMs) => ping(() => pool.query('select 1'), timeoutMs),
    listen: (channel, onNotice) => listenPostgres(url, channel, onNotice),
    async close() {
      if (closed) return;
      closed = true;
      await pool.end();
    },
  };
}

async function connectPglite(
  target: Extract<DatabaseTarget, { kind: 'pglite' | 'pglite-memory' }>,
): Promise<Database> {
  let release: (() => Promise<void>) | undefined;
  let client: PGlite;
  compileWasmOnMainThread();
  if (target.kind === 'pglite') {
    await mkdir(target.dataDir, { recursive: true });
    // PGlite has no cross-process locking of its own; two processes on one data directory corrupt it.
    release = await lockDataDir(`${target.dataDir}.lock`).catch((error: unknown) => {
      if (error instanceof LockHeldError) throw new DatabaseBusyError(path.dirname(target.dataDir));
      throw error;
    });
    try {
      await initPgliteDataDir(target.dataDir);
    } catch (error) {
      await release();
      throw error;
    }
    client = new PGlite({ dataDir: target.dataDir, ...PGLITE_OPTIONS });
  } else {
    client = new PGlite({
      ...(target.loadDataDir && { loadDataDir: target.loadDataDir }),
      ...PGLITE_OPTIONS,
    });
  }
  try {
    await client.waitReady;
  } catch (error) {
    await release?.();
    throw error;
  }
  return fromPglite(client, release);
}

/** Wraps an open PGlite; `release` runs after it closes (the data-directory lock). */
export function fromPglite(client: PGlite, release?: () => Promise<void>): Database {
  const db = drizzlePglite({ client, schema }) as unknown as Db;
  const lockQueues = new Map<number, Promise<void>>();
  let closed = false;
  const query: Database['query'] = async <T>(text: string, params?: unknown[]) => {
    const result = await client.query<T>(text, params);
    return { rows: result.rows };
  };
  const stopCheckpoints = checkpointWhenWalGrows({ query });
  return {
    driver: 'pglite',
    db,
    async execScript<T>(text: string) {
      const results = await client.exec(text);
      return { rows: (results.at(-1)?.rows ?? []) as T[] };
    },
    query,
    run: pgliteStatements(client),
    withAdvisoryLock(key, fn) {
      // One process owns PGlite, so an in-process queue per key gives the same guarantee.
      const previous = lockQueues.get(key) ?? Promise.resolve();
      const run = previous.then(fn, fn);
      const settled = run.then(
        () => {},
        () => {},
      );
      lockQueues.set(key, settled);
      void settled.then(() => {
        if (lockQueues.get(key) === settled) lockQueues.delete(key);
      });
      return run;
    },
    ping: (timeoutMs) => (closed ? Promise.resolve(false) : ping(() => client.query('select 1'), timeoutMs)),
    listen: async () => async () => {},
    async dumpEmbedded() {
      // A checkpoint first, so the restored copy has little WAL to replay.
      await client.query('checkpoint');
      // Under the transaction lock: every query and transaction takes it, so none is half done.
      return client._runExclusiveTransaction(() => client.dumpDataDir('none'));
    },
    async close() {
      if (closed) return;
      closed = true;
      stopCheckpoints();
      await client.close();
      await release?.();
    },
  };
}

/**
 * PGlite's `query` parses and plans every statement anew, in six protocol exchanges with the
 * WebAssembly backend. A hot statement is parsed once into a named prepared statement; each call
 * is then one exchange (bind, describe, execute, sync), which costs half the CPU or less
 * (docs/DECISIONS.md, D-74). It takes the locks `query` takes, so it never runs inside a transaction
 * another caller has open on the one connection.
 */
function pgliteStatements(client: PGlite): Database['run'] {
  const { serialize } = protocol;
  const prepared = new Set<string>();
  return <Row>(statement: Statement<Row>, params: unknown[]): Promise<Row[]> =>
    client._runExclusiveTransaction(() =>
      client._runExclusiveQuery(async () => {
        const messages: Uint8Array[] = [];
        if (!prepared.has(statement.name)) {
          // Closed first: a pooled instance (the tests') may hold the name from an earlier wrapper.
          messages.push(
            serialize.close({ type: 'S', name: statement.name }),
            serialize.parse({ name: statement.name, text: statement.text, types: [] }),
          );
        }
        messages.push(
          serialize.bind({ statement: statement.name, values: params.map(parameterText) }),
          serialize.describe({ type: 'P' }),
          serialize.execute({}),
          serialize.sync(),
        );
        const { messages: replies } = await client.execProtocol(Buffer.concat(messages));
        prepared.add(statement.name);
        return (parse.parseResults(replies, client.parsers)[0]?.rows ?? []) as Row[];
      }),
    );
}

/** A connection of its own that LISTENs, and comes back (every second) when it is lost. */
async function listenPostgres(
  url: string,
  channel: string,
  onNotice: (payload: string | 'all') => void,
): Promise<() => Promise<void>> {
  let client: pg.Client | undefined;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  const open = async (): Promise<void> => {
    const next = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
    next.on('notification', (message) => {
      if (message.channel === channel) onNotice(message.payload ?? 'all');
    });
    next.on('error', () => {});
    next.on('end', () => {
      if (stopped || client !== next) return;
      client = undefined;
      retry = setTimeout(reopen, 1000);
    });
    await next.connect();
    await next.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    client = next;
  };
  const reopen = () => {
    if (stopped) return;
    open().then(
      () => onNotice('all'),
      () => {
        retry = setTimeout(reopen, 1000);
      },
    );
  };
  await open();
  return async () => {
    stopped = true;
    clearTimeout(retry);
    await client?.end().catch(() => {});
  };
}

async function ping(select1: () => Promise<unknown>, timeoutMs = 1000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    return await Promise.race([select1().then(() => true), timeout]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
