import { randomUUID } from 'node:crypto';
import { readFileSync, readlinkSync, utimesSync } from 'node:fs';
import { readFile, rmdir, stat, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import lockfile from 'proper-lockfile';

/** The holder touches its lock this often; a lock untouched for STALE_MS is abandoned. */
const HEARTBEAT_MS = 5_000;
const STALE_MS = 15_000;

/** What a lock file says about its holder. */
interface Holder {
  pid: number;
  /** Where `pid` means something: host name, boot and PID namespace. */
  machine: string;
  /** One acquisition; tells a lock left by an earlier process with our PID from our own. */
  token: string;
}

export class LockHeldError extends Error {
  constructor(lockPath: string) {
    super(`${lockPath} is held by another live process`);
    this.name = 'LockHeldError';
  }
}

/** Tokens of the locks this process holds. */
const heldHere = new Set<string>();

/**
 * Takes an exclusive lock on `lockPath` for this process, or throws LockHeldError. The lock is a
 * file naming its holder, created exclusively (O_EXCL) and touched every 5 s while held. It
 * counts as abandoned, and is taken over, when
 * - its holder is on this machine (same host, boot and PID namespace) and its PID is gone, which
 *   is known at once (a restart right after `kill -9`) — or is this process's own PID but not a
 *   lock it took (a restarted container that got the same PID);
 * - or it has not been touched for 15 s (a holder on another machine, a reused PID, or one that
 *   died before it finished writing its name).
 * Resolves with the function that releases it.
 */
export async function lockDataDir(lockPath: string): Promise<() => Promise<void>> {
  const me: Holder = { pid: process.pid, machine: thisMachine(), token: randomUUID() };
  for (let attempt = 0; ; attempt++) {
    try {
      await writeFile(lockPath, JSON.stringify(me), { flag: 'wx', mode: 0o600 });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    // Retried once after a takeover: another process may have taken it in between.
    if (attempt > 0 || !(await removeIfAbandoned(lockPath))) throw new LockHeldError(lockPath);
  }
  heldHere.add(me.token);
  const heartbeat = setInterval(() => touch(lockPath, me), HEARTBEAT_MS);
  heartbeat.unref();
  let released = false;
  return async () => {
    if (released) return;
    released = true;
    clearInterval(heartbeat);
    heldHere.delete(me.token);
    if ((await readHolder(lockPath))?.token === me.token) await unlink(lockPath);
  };
}

/**
 * Keeps the lock fresh. A lock that is no longer ours was taken over while this process was
 * stalled past the stale time: another process may be writing the database now, so this one
 * stops (an uncaught error, as proper-lockfile does) rather than write beside it.
 */
function touch(lockPath: string, me: Holder): void {
  let holder: Holder | undefined;
  try {
    holder = parseHolder(readFileSync(lockPath, 'utf8'));
  } catch {
    holder = undefined;
  }
  if (holder?.token !== me.token) {
    throw new Error(`the lock ${lockPath} was taken over by another process`);
  }
  try {
    const now = new Date();
    utimesSync(lockPath, now, now);
  } catch {
    // A missed touch is retried on the next beat; only 15 s of them make the lock look abandoned.
  }
}

/**
 * Removes the lock at `lockPath` if it is abandoned; true when it is gone. Takeovers are
 * serialised by a short-lived lock of their own, so two starting processes cannot both judge
 * the same dead holder and each remove the lock the other has just taken.
 */
async function removeIfAbandoned(lockPath: string): Promise<boolean> {
  let releaseTakeover: () => Promise<void>;
  try {
    releaseTakeover = await lockfile.lock(lockPath, {
      lockfilePath: `${lockPath}.takeover`,
      realpath: false,
      stale: 5_000,
      retries: { retries: 10, minTimeout: 20, maxTimeout: 200 },
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOCKED') return false;
    throw error;
  }
  try {
    let info: { mtimeMs: number; isDirectory(): boolean };
    try {
      info = await stat(lockPath);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return true;
      throw error;
    }
    // A directory is the lock of an earlier version (proper-lockfile), judged by its age alone.
    const holder = info.isDirectory() ? undefined : await readHolder(lockPath);
    if (!isAbandoned(holder, info.mtimeMs)) return false;
    await (info.isDirectory() ? rmdir(lockPath) : unlink(lockPath));
    return true;
  } finally {
    await releaseTakeover();
  }
}

function isAbandoned(holder: Holder | undefined, touchedAtMs: number): boolean {
  if (holder?.machine === thisMachine()) {
    if (holder.pid === process.pid) return !heldHere.has(holder.token);
    if (!processExists(holder.pid)) return true;
  }
  return Date.now() - touchedAtMs > STALE_MS;
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

async function readHolder(lockPath: string): Promise<Holder | undefined> {
  try {
    return parseHolder(await readFile(lockPath, 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

function parseHolder(text: string): Holder | undefined {
  try {
    const value = JSON.parse(text) as Partial<Holder>;
    return typeof value.pid === 'number' &&
      typeof value.machine === 'string' &&
      typeof value.token === 'string'
      ? (value as Holder)
      : undefined;
  } catch {
    return undefined;
  }
}

let machine: string | undefined;
/**
 * Where a PID names one process: this host, this boot, this PID namespace. Two containers on
 * one host (or two hosts sharing a volume) have PIDs that mean nothing to each other. Off Linux
 * only the host name is known.
 */
function thisMachine(): string {
  machine ??= [
    os.hostname(),
    readOr(() => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()),
    readOr(() => readlinkSync('/proc/self/ns/pid')),
  ].join(' ');
  return machine;
}

function readOr(read: () => string): string {
  try {
    return read();
  } catch {
    return '';
  }
}
