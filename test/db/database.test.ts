import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connectDatabase } from '../../src/db/connect.js';
import { migrate } from '../../src/db/migrate.js';
import { checkpointIfDue } from '../../src/db/pglite-checkpoints.js';
import { statement } from '../../src/db/statement.js';
import { BACKENDS, openTestDatabase, type TestDatabase } from '../support/db.js';
import { seedEmbeddedDatabase } from '../support/embedded-database.js';

describe.each(BACKENDS)('database on %s', (backend) => {
  let database: TestDatabase;
  afterEach(async () => database?.close());

  it('has the committed migrations applied, and applying them again changes nothing', async () => {
    database = await openTestDatabase(backend);
    const tables = async () =>
      (
        await database.query<{ table_name: string }>(
          "select table_name from information_schema.tables where table_schema = 'public' order by table_name",
        )
      ).rows.map((row) => row.table_name);
    const before = await tables();
    expect(before).toEqual(expect.arrayContaining(['invites', 'platform_settings']));
    await migrate(database);
    expect(await tables()).toEqual(before);
  });

  it('answers ping, and not after close', async () => {
    database = await openTestDatabase(backend);
    expect(await database.ping()).toBe(true);
    await database.close();
    expect(await database.ping(200)).toBe(false);
  });

  it('serialises work under one advisory lock', async () => {
    database = await openTestDatabase(backend);
    const order: string[] = [];
    const task = (name: string) =>
      database.withAdvisoryLock(42, async () => {
        order.push(`${name}:start`);
        await new Promise((resolve) => setTimeout(resolve, 50));
        order.push(`${name}:end`);
      });
    await Promise.all([task('a'), task('b')]);
    expect(order).toEqual(
      order[0] === 'a:start'
        ? ['a:start', 'a:end', 'b:start', 'b:end']
        : ['b:start', 'b:end', 'a:start', 'a:end'],
    );
  });

  it('rolls back a failed transaction completely', async () => {
    database = await openTestDatabase(backend);
    await expect(
      database.db.transaction(async (tx) => {
        await tx.execute(sql`insert into platform_settings (key, value) values ('x', '1'::jsonb)`);
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    const { rows } = await database.query("select count(*)::int as n from platform_settings where key = 'x'");
    expect(rows[0]).toEqual({ n: 0 });
  });

  it('runs a prepared statement again and again, its values parsed alike on both drivers', async () => {
    database = await openTestDatabase(backend);
    const echo = statement<{ money: string; at: Date; list: string[]; missing: string | null }>(
      'test_echo',
      `select $1::numeric as money, $2::timestamptz as at, json_build_array($3::text, 'b') as list,
        (select key from platform_settings where key = $3) as missing`,
    );
    const at = new Date('2026-11-25T10:00:00.123Z');
    for (const money of ['12345678901234567890', '0']) {
      expect(await database.run(echo, [money, at, 'a'])).toEqual([
        { money, at, list: ['a', 'b'], missing: null },
      ]);
    }
  });

  it('never runs a prepared statement inside a transaction another caller has open', async () => {
    database = await openTestDatabase(backend);
    const insert = statement<{ key: string }>(
      'test_insert_setting',
      `insert into platform_settings (key, value) values ($1, '1'::jsonb) returning key`,
    );
    let inside!: () => void;
    const opened = new Promise<void>((resolve) => {
      inside = resolve;
    });
    const rolledBack = database.db.transaction(async (tx) => {
      await tx.execute(sql`insert into platform_settings (key, value) values ('x', '1'::jsonb)`);
      inside();
      await new Promise((resolve) => setTimeout(resolve, 100));
      throw new Error('boom');
    });
    await opened;
    const ran = database.run(insert, ['y']);
    await expect(rolledBack).rejects.toThrow('boom');
    expect(await ran).toEqual([{ key: 'y' }]);
    const { rows } = await database.query('select key from platform_settings order by key');
    expect(rows).toEqual([{ key: 'y' }]);
  });
});

describe('the embedded database on disk', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'repo402-pglite-disk-'));
  });
  afterEach(async () => rm(dir, { recursive: true, force: true }));

  it('runs with its settings, on a new data directory and on one opened before', async () => {
    for (let open = 0; open < 2; open++) {
      const database = await connectDatabase({ kind: 'pglite', dataDir: dir });
      try {
        const settings = await database.query<{ name: string; setting: string; unit: string | null }>(
          "select name, setting, unit from pg_settings where name in ('shared_buffers', 'wal_init_zero') order by name",
        );
        // shared_buffers counts 8 kB pages: 2,048 of them are 16 MB.
        expect(settings.rows).toEqual([
          { name: 'shared_buffers', setting: '2048', unit: '8kB' },
          { name: 'wal_init_zero', setting: 'off', unit: null },
        ]);
      } finally {
        await database.close();
      }
    }
  });

  it('checkpoints once enough WAL is written since the last checkpoint, which it never does alone', async () => {
    await rm(dir, { recursive: true });
    await seedEmbeddedDatabase(dir);
    const database = await connectDatabase({ kind: 'pglite', dataDir: dir });
    const walSince = async () =>
      BigInt(
        (
          await database.query<{ since: string }>(
            'select pg_wal_lsn_diff(pg_current_wal_lsn(), redo_lsn)::bigint::text as since from pg_control_checkpoint()',
          )
        ).rows[0]!.since,
      );
    const MB = 1024n * 1024n;
    try {
      await database.query('create table filler (body text)');
      for (let i = 0; i < 12; i++)
        await database.query("insert into filler select repeat('x', 1000) from generate_series(1, 1000)");
      // Single-user PostgreSQL has not checkpointed by itself, whatever max_wal_size says.
      expect(await walSince()).toBeGreaterThan(12n * MB);
      expect(await checkpointIfDue(database, 64n * MB)).toBe(false);
      expect(await checkpointIfDue(database, 8n * MB)).toBe(true);
      expect(await walSince()).toBeLessThan(MB);
      expect(await checkpointIfDue(database, 8n * MB)).toBe(false);
    } finally {
      await database.close();
    }
  });
});
