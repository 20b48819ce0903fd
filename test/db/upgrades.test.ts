import { randomBytes } from 'node:crypto';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import { migrate as migrateNodePg } from 'drizzle-orm/node-postgres/migrator';
import type { PgliteDatabase } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attestationSigningKey } from '../../src/attestations/service.js';
import { findAttestation } from '../../src/attestations/store.js';
import { verifyAttestation } from '../../src/attestations/verify.js';
import { loadConfig } from '../../src/config.js';
import { connectDatabase, type Database, fromPglite } from '../../src/db/connect.js';
import {
  appliedMigration,
  DatabaseNewerError,
  MIGRATIONS_DIR,
  migrate,
  migrationJournal,
} from '../../src/db/migrate.js';
import { PGLITE_OPTIONS } from '../../src/db/pglite-memory.js';
import { creatorBalances } from '../../src/earnings/store.js';
import { attestUnattestedReleases } from '../../src/releases/cut/attest.js';
import { createContext } from '../../src/runtime.js';
import { adminQuery, BACKENDS } from '../support/db.js';
import { EXPECTED_BALANCES, IDS, writeRows } from './upgrade-rows.js';

/**
 * Upgrades from every earlier version: a database is built at each migration step, given the rows
 * an installation of that version could hold, migrated to the newest step as a start-up does,
 * attested as the upgrade notes say (`repo402 attestations backfill`), and held to the invariants
 * the service relies on.
 */

const JOURNAL = migrationJournal();
const NEWEST = JOURNAL.at(-1)!.tag;
/** Every step an installation could be at before this version: all but the newest. */
const EARLIER = JOURNAL.slice(0, -1).map((entry) => entry.idx);

/** A migrations folder holding steps 0..`step`, for drizzle's migrator to stop there. */
async function migrationsUpTo(root: string, step: number): Promise<string> {
  const dir = path.join(root, `upto-${step}`);
  await mkdir(path.join(dir, 'meta'), { recursive: true });
  const entries = JOURNAL.slice(0, step + 1);
  for (const entry of entries)
    await cp(path.join(MIGRATIONS_DIR, `${entry.tag}.sql`), path.join(dir, `${entry.tag}.sql`));
  await writeFile(
    path.join(dir, 'meta', '_journal.json'),
    JSON.stringify({ version: '7', dialect: 'postgresql', entries }),
  );
  return dir;
}

interface Snapshot {
  payments: Record<string, unknown>[];
  purchases: Record<string, unknown>[];
  entitlements: Record<string, unknown>[];
  ledger: Record<string, unknown>[];
  sweeps: Record<string, unknown>[];
}

/** The money rows in the columns every step has, so before and after compare. */
async function snapshot(database: Database): Promise<Snapshot> {
  const has = async (table: string) =>
    (await database.query<{ t: string | null }>(`select to_regclass($1)::text as t`, [`public.${table}`]))
      .rows[0]?.t != null;
  const rows = async (table: string, sql: string) =>
    (await has(table)) ? (await database.query(sql)).rows : [];
  return {
    payments: await rows(
      'payments',
      `select id, asset, payer, nonce, amount_micro::text, state, transaction, listing_id, version from payments order by id`,
    ),
    purchases: await rows(
      'purchases',
      `select id, payment_id, wallet, listing_id, version, amount_micro::text from purchases order by id`,
    ),
    entitlements: await rows(
      'entitlements',
      `select wallet, listing_id, version, purchase_id from entitlements order by wallet, listing_id, version`,
    ),
    ledger: await rows(
      'ledger_entries',
      `select creator_id, kind, amount_micro::text, fee_micro::text, purchase_id, sweep_id from ledger_entries order by created_at, kind`,
    ),
    sweeps: await rows(
      'payout_sweeps',
      `select id, state, amount_micro::text, transaction from payout_sweeps order by id`,
    ),
  };
}

/** Tables, columns, types and indexes: what a migrated database must share with a new one. */
async function schemaShape(database: Database): Promise<string[]> {
  const columns = await database.query<{ d: string }>(
    `select table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' || coalesce(column_default, '') as d
     from information_schema.columns where table_schema = 'public' order by 1`,
  );
  const indexes = await database.query<{ d: string }>(
    `select indexdef as d from pg_indexes where schemaname = 'public' order by 1`,
  );
  const checks = await database.query<{ d: string }>(
    `select conrelid::regclass::text || ' ' || conname || ' ' || pg_get_constraintdef(oid) as d
     from pg_constraint where connamespace = 'public'::regnamespace order by 1`,
  );
  return [...columns.rows, ...indexes.rows, ...checks.rows].map((row) => row.d);
}

describe.each(BACKENDS)('upgrades from every earlier migration step on %s', (backend) => {
  let root: string;
  let fresh: string[];
  let embedded: PGlite | undefined;
  const postgresNames: string[] = [];

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'repo402-upgrades-'));
    const newest = await openAt(JOURNAL.length - 1);
    fresh = await schemaShape(newest);
    await newest.close();
  });
  afterAll(async () => {
    await embedded?.close();
    for (const name of postgresNames)
      await adminQuery(process.env.TEST_DATABASE_URL!, `drop database if exists ${name} with (force)`);
    await rm(root, { recursive: true, force: true });
  });

  /** A database with migrations 0..`step` applied, nothing else. */
  async function openAt(step: number): Promise<Database> {
    const folder = await migrationsUpTo(root, step);
    if (backend === 'pglite') {
      // One embedded database emptied for each step: a new one takes seconds to make or copy,
      // emptying and migrating it under a second.
      embedded ??= new PGlite({ ...PGLITE_OPTIONS });
      const database = fromPglite(embedded);
      await database.execScript(
        'drop schema if exists drizzle cascade; drop schema public cascade; create schema public;',
      );
      await migratePglite(database.db as unknown as PgliteDatabase, { migrationsFolder: folder });
      // The context closes what it is given; this one outlives the step.
      return { ...database, close: async () => {} };
    }
    const adminUrl = process.env.TEST_DATABASE_URL!;
    const name = `repo402_upgrade_${randomBytes(6).toString('hex')}`;
    postgresNames.push(name);
    await adminQuery(adminUrl, `create database ${name}`);
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    const database = await connectDatabase({ kind: 'postgres', url: url.toString(), poolSize: 2 });
    await migrateNodePg(database.db as unknown as NodePgDatabase, { migrationsFolder: folder });
    return database;
  }

  it.each(EARLIER)(
    'from step %i: migrates to the newest and keeps every invariant',
    async (step) => {
      const database = await openAt(step);
      expect(await appliedMigration(database)).toBe(JOURNAL[step]!.tag);
      await writeRows(database);
      const before = await snapshot(database);

      await migrate(database);
      expect(await appliedMigration(database)).toBe(NEWEST);
      expect(await schemaShape(database)).toEqual(fresh);

      const dataDir = await mkdtemp(path.join(root, 'data-'));
      const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', OSV_SYNC: 'false' });
      const runtime = await createContext(config, { database, appSecret: Buffer.alloc(32, 7) });
      try {
        const { ctx } = runtime;
        // The upgrade notes' one step after migrating past attestations (0014).
        await attestUnattestedReleases(ctx);

        // No payment lost: every row of money is still there, as it was.
        const after = await snapshot(database);
        expect(after).toEqual(before);

        if (before.payments.length > 0) {
          // Books balance, as the newest code reads them: the sweep pays what the ledger says.
          const balances = new Map(
            (await creatorBalances(ctx.database.db)).map((b) => [b.creatorId, b.balanceMicro]),
          );
          expect(balances).toEqual(EXPECTED_BALANCES);
          // Every settled payment that is not a duplicate has its purchase, entitlement and credit.
          const unbooked = await database.query(
            `select p.id from payments p
           left join purchases u on u.payment_id = p.id
           left join entitlements e on e.purchase_id = u.id
           left join ledger_entries l on l.purchase_id = u.id and l.kind = 'credit'
           where p.state = 'settled' and not p.duplicate
             and (u.id is null or e.purchase_id is null or l.id is null
                  or (l.amount_micro + l.fee_micro) <> p.amount_micro)`,
          );
          expect(unbooked.rows).toEqual([]);
          // 0007 flags a second payment for one version and keeps the first one's slot.
          const duplicates = await database.query<{ id: string }>(`select id from payments where duplicate`);
          expect(duplicates.rows.map((row) => row.id)).toEqual([IDS.payDuplicate]);
        } else {
          // Before 0003 (payments) there is no money to keep.
          expect(step).toBeLessThan(3);
        }

        // Every release with a verdict is attested, and the attestation verifies with the key.
        const judged = await database
          .query<{ id: string }>(`select id from releases where verdict <> 'pending'`)
          .catch(() => ({ rows: [] as { id: string }[] }));
        const attestations = await database.query<{ release_id: string }>(
          `select release_id from release_attestations`,
        );
        expect(attestations.rows.map((row) => row.release_id).sort()).toEqual(
          judged.rows.map((row) => row.id).sort(),
        );
        if (judged.rows.length > 0) {
          expect(judged.rows).toHaveLength(3);
          const key = await attestationSigningKey(ctx);
          const trusted = [{ keyid: key.keyid, publicKey: key.publicKey }];
          for (const row of judged.rows) {
            const envelope = await findAttestation(ctx.database.db, row.id);
            const verification = verifyAttestation(envelope, trusted);
            expect(verification, JSON.stringify(verification)).toMatchObject({ ok: true });
          }
          // 0015 moved the trees out of `computed`; 0017 put the passing releases on sale.
          const parts = await database.query(`select release_id from release_tree_parts`);
          expect(parts.rows).toHaveLength(3);
          const trees = await database.query(`select id from releases where computed ? 'tree'`);
          expect(trees.rows).toEqual([]);
          const onSale = await database.query<{ id: string }>(
            `select id from releases where on_sale_at is not null and on_sale_price_micro is not null order by id`,
          );
          expect(onSale.rows.map((row) => row.id)).toEqual([IDS.toolsPass, IDS.notesPass].sort());
        }
      } finally {
        await runtime.close();
      }
    },
    60_000,
  );

  it('a version older than the database refuses to run on it, naming the way back', async () => {
    const database = await openAt(JOURNAL.length - 1);
    try {
      // A migration this version does not know, as a later version would have recorded it.
      await database.query(
        `insert into drizzle.__drizzle_migrations (hash, created_at) values ('later', $1)`,
        [String(JOURNAL.at(-1)!.when + 1000)],
      );
      const refused = await migrate(database).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(DatabaseNewerError);
      expect((refused as Error).message).toContain('restore the backup taken before the upgrade');
    } finally {
      await database.close();
    }
  });
});
