import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ROOT, startServerProcess } from '../test/support/process.js';
import { type BenchDatabase, createBenchDatabase } from './postgres.js';

export type DatabaseKind = 'pglite' | 'postgres';

export interface Repo402Process {
  url: string;
  /** The server's own process (node running dist/cli.js), whose memory bench/memory.ts reads. */
  pid: number;
  dataDir: string;
  database: DatabaseKind;
  /** SIGTERM, then the data directory and any PostgreSQL database made for it are removed. */
  stop(): Promise<void>;
}

/** Lifted out of the way: the benchmarks measure the routes, not the limiter (every client is 127.0.0.1). */
const UNLIMITED = '100000000/60';

/**
 * `repo402 serve` from the build, as `npm start` runs it, in a process of its own: on the embedded
 * PGlite default in a fresh data directory, or on a PostgreSQL database made for this run.
 * `LOG_LEVEL=warn` so per-request log lines are not part of what is measured.
 */
export async function startRepo402(
  database: DatabaseKind,
  env: Record<string, string> = {},
): Promise<Repo402Process> {
  if (!existsSync(path.join(ROOT, 'dist/cli.js'))) throw new Error('run `npm run build` first');
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'repo402-bench-'));
  let postgres: BenchDatabase | undefined;
  const cleanUp = async () => {
    await postgres?.drop();
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    if (database === 'postgres') postgres = await createBenchDatabase();
    const server = await startServerProcess(
      {
        DATA_DIR: dataDir,
        LOG_LEVEL: 'warn',
        RATE_LIMIT_PUBLIC: UNLIMITED,
        RATE_LIMIT_MCP: UNLIMITED,
        RATE_LIMIT_AUTH: UNLIMITED,
        RATE_LIMIT_CREATOR: UNLIMITED,
        ...(postgres ? { DATABASE_URL: postgres.url } : {}),
        ...env,
      },
      { built: true },
    );
    return {
      url: server.url,
      pid: server.child.pid!,
      dataDir,
      database,
      stop: async () => {
        await server.stop();
        await cleanUp();
      },
    };
  } catch (error) {
    await cleanUp();
    throw error;
  }
}
