import { spawn } from 'node:child_process';
import { access } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import v8 from 'node:v8';
import type { PGliteOptions } from '@electric-sql/pglite';

/**
 * Settings for every embedded database.
 * - PGlite's default 128 MB of shared buffers is touched when the server starts, so it is resident
 *   from the first request; 16 MB keeps the WebAssembly heap at its 128 MB floor and cost the
 *   embedded server about 140 MB less (docs/DECISIONS.md, D-105). Pages beyond the buffers are
 *   read through the host file system, whose page cache serves them.
 * - No zeros are written into each new 16 MB WAL segment before use (`wal_init_zero`, which
 *   PostgreSQL offers for file systems that gain nothing from it). The database runs on the event
 *   loop's thread, so writing them held every request for 77-120 ms once per 16 MB of changes;
 *   without them a new segment costs one write (docs/BENCHMARKS.md, "a cut's longest stall").
 */
export const PGLITE_OPTIONS = {
  postgresqlconf: ['shared_buffers=16MB', 'wal_init_zero=off'],
} satisfies Partial<PGliteOptions>;

/**
 * Compiles WebAssembly (PGlite's Postgres) on the thread that runs it, with no background compile
 * tasks. Those tasks' allocations stayed in their threads' malloc arenas: about 25 MB resident for
 * good, and on two cores they slowed the first queries they competed with. Measured here: the
 * bare database 157-161 MB resident instead of 182-188, opened in 414-479 ms instead of 487-561,
 * its first 20 queries in 104-109 ms instead of 236-300, steady queries no slower. A V8 flag, set
 * before the module is compiled; it applies to the whole process.
 */
export function compileWasmOnMainThread(): void {
  v8.setFlagsFromString('--wasm-num-compilation-tasks=0');
}

/**
 * Creates the embedded database's files when `dataDir` holds none yet, in a child process.
 * `initdb` runs in its own WebAssembly module whose ~430 MB heap stays resident in the process that
 * ran it, even after closing and collecting; run here, it would double the server's memory for good.
 */
export async function initPgliteDataDir(dataDir: string): Promise<void> {
  if (await exists(path.join(dataDir, 'PG_VERSION'))) return;
  const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
  const script = [
    `const { PGlite } = await import(${JSON.stringify(entry)});`,
    `const db = new PGlite(${JSON.stringify({ dataDir, ...PGLITE_OPTIONS })});`,
    'await db.waitReady;',
    'await db.close();',
  ].join('\n');
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-4000);
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (code === 0) resolve();
      else
        reject(
          new Error(`creating the embedded database in ${dataDir} failed (${signal ?? code}): ${stderr}`),
        );
    });
  });
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}
