import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connectDatabase, type Database } from '../src/db/connect.js';
import { invites } from '../src/db/schema/index.js';
import { sha256Hex } from '../src/platform/tokens.js';
import { adminQuery, BACKENDS } from './support/db.js';
import { seedEmbeddedDatabase } from './support/embedded-database.js';
import { PACKAGE_VERSION, runCli, type ServerProcess, startServerProcess } from './support/process.js';

const INVITE = /^r402inv_[A-Za-z0-9_-]{22}$/;

describe('repo402 CLI', { timeout: 120_000 }, () => {
  let dataDir: string;
  let server: ServerProcess | undefined;
  beforeEach(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'repo402-cli-'));
  });
  afterEach(async () => {
    await server?.stop('SIGKILL');
    server = undefined;
    await rm(dataDir, { recursive: true, force: true });
  });

  it('invites create prints only the codes, one per line, and stores only their hashes', async () => {
    // Its subject is the output, not a new database: an initialised one is copied in instead of
    // running PGlite's initdb (about 7 s of CPU). The command still migrates it, as `--init` does.
    // `--init` on a new DATA_DIR stays tested below ('create it with --init', `migrate`).
    await seedEmbeddedDatabase(path.join(dataDir, 'db'));
    const result = await runCli(['invites', 'create', '--count', '3', '--init'], { DATA_DIR: dataDir });
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines.pop()).toBe('');
    expect(lines).toHaveLength(3);
    for (const line of lines) expect(line).toMatch(INVITE);
    expect(new Set(lines).size).toBe(3);

    const database = await connectDatabase({ kind: 'pglite', dataDir: path.join(dataDir, 'db') });
    try {
      const rows = await database.db.select().from(invites);
      expect(rows.map((row) => row.codeHash).sort()).toEqual(lines.map(sha256Hex).sort());
      expect(JSON.stringify(rows)).not.toContain('r402inv_');
    } finally {
      await database.close();
    }
  });

  it.each([['0'], ['1001'], ['abc'], ['-1']])(
    'refuses --count %s without printing anything on stdout',
    async (count) => {
      const result = await runCli(['invites', 'create', '--count', count], { DATA_DIR: dataDir });
      expect(result.code).not.toBe(0);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain('--count');
    },
  );

  it('prints its version, the package version, and nothing else', async () => {
    const result = await runCli(['--version'], { DATA_DIR: dataDir });
    expect(result).toEqual({ code: 0, stdout: `${PACKAGE_VERSION}\n`, stderr: '' });
    expect(PACKAGE_VERSION).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('names an unknown command instead of starting the server', async () => {
    const result = await runCli(['bogus'], { DATA_DIR: dataDir });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("unknown command 'bogus'");
    expect(result.stdout).toBe('');
  });

  it('stops on a bad configuration value, naming the variable', async () => {
    const result = await runCli(['serve'], { DATA_DIR: dataDir, PORT: 'eighty' });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('PORT="eighty"');
  });

  it('refuses to start a git host whose zips, rows or token the processes it serves could not share', async () => {
    const result = await runCli(['git-host'], { DATA_DIR: dataDir });
    expect(result.code).toBe(2);
    for (const name of ['DATABASE_URL', 'S3_BUCKET', 'APP_SECRET']) {
      expect(result.stderr).toContain(`${name}: required by repo402 git-host`);
    }
  });

  it('reaches a running server through its control socket: ready, invites, pause and resume', async () => {
    // Nothing runs yet: not ready, and it says why.
    const alone = await runCli(['ready'], { DATA_DIR: dataDir });
    expect(alone.code).toBe(1);
    expect(alone.stderr).toContain('not ready: no repo402 process answers');

    server = await startServerProcess({ DATA_DIR: dataDir });
    const ready = await runCli(['ready'], { DATA_DIR: dataDir });
    expect(ready.code, ready.stderr).toBe(0);
    expect(ready.stdout).toBe(
      'database: ok\nblob_store: ok\nrepositories: ok\nfacilitator: ok\nchain: ok\npaused: no\nready\n',
    );
    // The embedded database is locked by the server: this only works through the control socket.
    const created = await runCli(['invites', 'create', '--count', '2'], { DATA_DIR: dataDir });
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout.trim().split('\n')).toHaveLength(2);

    expect((await runCli(['pause'], { DATA_DIR: dataDir })).code).toBe(0);
    const paused = await fetch(`${server.url}/api/terms`);
    expect(paused.status).toBe(503);
    expect((await paused.json()).code).toBe('paused');
    expect((await fetch(`${server.url}/api/health`)).status).toBe(200);
    const whilePaused = await runCli(['ready'], { DATA_DIR: dataDir });
    expect(whilePaused.code).toBe(1);
    expect(whilePaused.stdout).toContain('paused: yes\nnot ready\n');

    expect((await runCli(['resume'], { DATA_DIR: dataDir })).code).toBe(0);
    expect((await fetch(`${server.url}/api/terms`)).status).toBe(200);
  });

  it('payouts and sales: list what the reconciliation left, refuse a resolution without its flags or of an unknown transaction', async () => {
    const tx = `0x${'ab'.repeat(32)}`;
    const noFlags = await runCli(['payouts', 'resolve', tx], { DATA_DIR: dataDir });
    expect(noFlags.code).toBe(1);
    expect(noFlags.stderr).toContain('give --creator <handle> or --not-a-payout --reason <text>');
    const noReason = await runCli(['payouts', 'resolve', tx, '--not-a-payout'], { DATA_DIR: dataDir });
    expect(noReason.code).toBe(1);
    expect(noReason.stderr).toContain('--not-a-payout needs --reason');
    const badListing = await runCli(['sales', 'grant', tx, '--listing', 'acme'], { DATA_DIR: dataDir });
    expect(badListing.code).toBe(1);
    expect(badListing.stderr).toContain('expected owner/slug');

    // An initialised data directory copied in, as above: these commands' subject is not initdb.
    await seedEmbeddedDatabase(path.join(dataDir, 'db'));
    const payouts = await runCli(['payouts', 'unresolved', '--init'], { DATA_DIR: dataDir });
    expect(payouts.code, payouts.stderr).toBe(0);
    expect(payouts.stdout).toBe('');
    expect(payouts.stderr).toContain('no unresolved transfers out: payouts are not held');
    const sales = await runCli(['sales', 'unattributed'], { DATA_DIR: dataDir });
    expect(sales.code, sales.stderr).toBe(0);
    expect(sales.stderr).toContain('no unattributed sales');
    const unknown = await runCli(['payouts', 'resolve', tx, '--not-a-payout', '--reason', 'fees'], {
      DATA_DIR: dataDir,
    });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain(`no unresolved transfer out has transaction ${tx}`);
    const refund = await runCli(['sales', 'refund', 'not-a-hash', '--note', 'x'], { DATA_DIR: dataDir });
    expect(refund.code).toBe(1);
    expect(refund.stderr).toContain('a transaction hash');
  });

  it('migrate applies migrations to a new data directory', async () => {
    const result = await runCli(['migrate'], { DATA_DIR: dataDir });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('');
  });
});

describe.each(BACKENDS)(
  'operator commands with no server and no database yet, on %s',
  { timeout: 120_000 },
  (backend) => {
    let dataDir: string;
    let env: Record<string, string>;
    /** PostgreSQL: an empty database of this test's own, its URL carrying a password to keep out of messages. */
    let databaseUrl: URL | undefined;
    beforeEach(async () => {
      dataDir = await mkdtemp(path.join(os.tmpdir(), 'repo402-cli-'));
      env = { DATA_DIR: path.join(dataDir, 'server-data') };
      if (backend === 'postgres') {
        databaseUrl = new URL(process.env.TEST_DATABASE_URL!);
        databaseUrl.pathname = `/repo402_test_${randomBytes(6).toString('hex')}`;
        await adminQuery(process.env.TEST_DATABASE_URL!, `create database ${databaseUrl.pathname.slice(1)}`);
        // Trust authentication ignores it; a server that checks passwords has one in the URL already.
        if (!databaseUrl.password) databaseUrl.password = 'hunter2';
        env.DATABASE_URL = databaseUrl.toString();
      }
    });
    afterEach(async () => {
      await rm(dataDir, { recursive: true, force: true });
      if (databaseUrl) {
        await adminQuery(
          process.env.TEST_DATABASE_URL!,
          `drop database if exists ${databaseUrl.pathname.slice(1)} with (force)`,
        );
      }
    });

    async function withDatabase<T>(read: (database: Database) => Promise<T>): Promise<T> {
      const database = await connectDatabase(
        databaseUrl
          ? { kind: 'postgres', url: databaseUrl.toString() }
          : { kind: 'pglite', dataDir: path.join(env.DATA_DIR!, 'db') },
      );
      try {
        return await read(database);
      } finally {
        await database.close();
      }
    }

    it('refuse to create one, naming DATA_DIR (and DATABASE_URL), and leave nothing behind', async () => {
      const result = await runCli(['invites', 'create'], env);
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain(`DATA_DIR=${env.DATA_DIR}`);
      expect(result.stderr).toContain('--init');
      expect(await readdir(dataDir)).toEqual([]);
      if (databaseUrl) {
        expect(result.stderr).toContain(
          `DATABASE_URL=postgres://${databaseUrl.username}:***@${databaseUrl.host}`,
        );
        expect(result.stderr).not.toContain(databaseUrl.password);
        const { rows } = await withDatabase((database) =>
          database.query(
            `select count(*)::int as tables from pg_tables where schemaname not in ('pg_catalog', 'information_schema')`,
          ),
        );
        expect(rows).toEqual([{ tables: 0 }]);
      }
    });

    it('create it with --init; later commands use it as it is', async () => {
      const created = await runCli(['invites', 'create', '--init'], env);
      expect(created.code, created.stderr).toBe(0);
      const again = await runCli(['invites', 'create'], env);
      expect(again.code, again.stderr).toBe(0);
      // One invite by default.
      expect(again.stdout.trim()).toMatch(INVITE);
      const hashes = await withDatabase(async (database) =>
        (await database.db.select().from(invites)).map((row) => row.codeHash).sort(),
      );
      expect(hashes).toEqual([created.stdout.trim(), again.stdout.trim()].map(sha256Hex).sort());
    });
  },
);
