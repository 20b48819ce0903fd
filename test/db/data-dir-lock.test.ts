import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { connectDatabase, type Database, DatabaseBusyError } from '../../src/db/connect.js';
import { LockHeldError, lockDataDir } from '../../src/db/data-dir-lock.js';
import { seedEmbeddedDatabase } from '../support/embedded-database.js';
import { ROOT, type ServerProcess, startServerProcess } from '../support/process.js';

const dirs: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'repo402-lock-'));
  dirs.push(dir);
  return dir;
}
/** An embedded database directory, initialised: these tests are about its lock, not its creation. */
async function databaseDir(): Promise<string> {
  const dataDir = path.join(await tempDir(), 'db');
  await seedEmbeddedDatabase(dataDir);
  return dataDir;
}

describe('the embedded database lock across processes', () => {
  const servers: ServerProcess[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.stop('SIGKILL');
    for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
  });

  it('lets `repo402 serve` start again right after kill -9, and still refuses a second live server', async () => {
    const dataDir = await tempDir();
    const first = await startServerProcess({ DATA_DIR: dataDir });
    servers.push(first);
    expect(await first.stop('SIGKILL')).toBe(null);

    // Started at once, not after the 15 s a heartbeat takes to go stale: the holder's PID is gone.
    const second = await startServerProcess({ DATA_DIR: dataDir });
    servers.push(second);

    const refused = await startServerProcess({ DATA_DIR: dataDir }).then(
      (third) => {
        servers.push(third);
        return 'started';
      },
      (error: Error) => error.message,
    );
    expect(refused).toContain('is in use by another repo402 process');
    // The refused start left the live server's lock alone.
    expect((await fetch(`${second.url}/api/health`)).status).toBe(200);
  }, 180_000);
});

/** A separate process that runs `opener` (an ES module body) and holds what it opened until killed. */
async function holdInChild(opener: string): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      `${opener}\nprocess.stdout.write('open\\n');\nsetInterval(() => {}, 1000);`,
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk) => String(chunk).includes('open') && resolve());
    child.once('exit', (code) => reject(new Error(`holder exited with ${code}`)));
  });
  return child;
}

const source = (file: string) => JSON.stringify(path.join(ROOT, file));
const openDatabase = (dataDir: string) =>
  `const { connectDatabase } = await import(${source('src/db/connect.ts')});
   await connectDatabase({ kind: 'pglite', dataDir: ${JSON.stringify(dataDir)} });`;
const takeLock = (lockPath: string) =>
  `const { lockDataDir } = await import(${source('src/db/data-dir-lock.ts')});
   await lockDataDir(${JSON.stringify(lockPath)});`;

const killed = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });

describe('the embedded database lock', () => {
  const open: Database[] = [];
  const children: ChildProcess[] = [];
  afterEach(async () => {
    for (const child of children.splice(0)) {
      if (child.exitCode === null && child.signalCode === null) await killed(child);
    }
    for (const database of open.splice(0)) await database.close();
    for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
  });

  const connect = async (dataDir: string) => {
    const database = await connectDatabase({ kind: 'pglite', dataDir });
    open.push(database);
    return database;
  };

  it('refuses a second opener while a live process holds it, and frees it at once when that process is killed', async () => {
    const dataDir = await databaseDir();
    const holder = await holdInChild(openDatabase(dataDir));
    children.push(holder);
    await expect(connectDatabase({ kind: 'pglite', dataDir })).rejects.toThrow(DatabaseBusyError);
    await killed(holder);
    const database = await connect(dataDir);
    expect(await database.ping()).toBe(true);
  }, 120_000);

  it('lets exactly one of several starters take over a dead holder, however they race', async () => {
    const lockPath = path.join(await tempDir(), 'db.lock');
    const holder = await holdInChild(takeLock(lockPath));
    children.push(holder);
    await killed(holder);
    const attempts = await Promise.allSettled(Array.from({ length: 5 }, () => lockDataDir(lockPath)));
    const taken = attempts.filter((attempt) => attempt.status === 'fulfilled');
    expect(taken).toHaveLength(1);
    for (const attempt of attempts) {
      if (attempt.status === 'rejected') expect(attempt.reason).toBeInstanceOf(LockHeldError);
    }
    await (taken[0] as PromiseFulfilledResult<() => Promise<void>>).value();
  }, 60_000);

  it('refuses a second open in the same process, and frees the lock on close', async () => {
    const dataDir = await databaseDir();
    const database = await connect(dataDir);
    await expect(connectDatabase({ kind: 'pglite', dataDir })).rejects.toThrow(DatabaseBusyError);
    await database.close();
    open.length = 0;
    await expect(readFile(`${dataDir}.lock`)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await (await connect(dataDir)).ping()).toBe(true);
  }, 120_000);

  it('takes over a lock left by an earlier process that had this same PID (a restarted container)', async () => {
    const dataDir = await databaseDir();
    const database = await connect(dataDir);
    const leftBehind = await readFile(`${dataDir}.lock`);
    await database.close();
    open.length = 0;
    await writeFile(`${dataDir}.lock`, leftBehind);
    expect(await (await connect(dataDir)).ping()).toBe(true);
  }, 120_000);

  it('judges a holder on another machine by its heartbeat: busy while fresh, taken over once 15 s stale', async () => {
    const dataDir = await databaseDir();
    const lockPath = `${dataDir}.lock`;
    // Its PID means nothing here, even if a process of ours has it.
    await writeFile(lockPath, JSON.stringify({ pid: process.pid, machine: 'elsewhere', token: 'theirs' }));
    await expect(connectDatabase({ kind: 'pglite', dataDir })).rejects.toThrow(DatabaseBusyError);
    const stale = new Date(Date.now() - 20_000);
    await utimes(lockPath, stale, stale);
    expect(await (await connect(dataDir)).ping()).toBe(true);
  }, 120_000);

  it('judges a lock directory left by an earlier version (proper-lockfile) by its age', async () => {
    const dataDir = await databaseDir();
    await mkdir(`${dataDir}.lock`, { recursive: true });
    await expect(connectDatabase({ kind: 'pglite', dataDir })).rejects.toThrow(DatabaseBusyError);
    const stale = new Date(Date.now() - 20_000);
    await utimes(`${dataDir}.lock`, stale, stale);
    expect(await (await connect(dataDir)).ping()).toBe(true);
  }, 120_000);
});
