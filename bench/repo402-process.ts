import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ROOT, type ServerProcess, startServerProcess } from '../test/support/process.js';
import { type BenchDatabase, createBenchDatabase } from './postgres.js';

export type DatabaseKind = 'pglite' | 'postgres';

export interface Repo402Process {
  url: string;
  /** The server's own process (node running dist/cli.js), whose memory bench/memory.ts reads. */
  pid: number;
  dataDir: string;
  database: DatabaseKind;
  /**
   * Stops the server and starts it again on the same data (directory and database) with `env`
   * added to the bench's own: settings read at start (`TRUST_PROXY`) are measured without seeding
   * again. `url` and `pid` then name the new process.
   */
  restart(env: Record<string, string>): Promise<void>;
  /** SIGTERM, then the data directory and any PostgreSQL database made for it are removed. */
  stop(): Promise<void>;
}

/**
 * Budgets no run reaches: every request is counted by the limiter's hook as in a deployment (its
 * store, its key from the client address, its headers), and none is refused, so each run measures
 * the route's answer rather than a 429 (autocannon is one client at 25,000 requests a second; the
 * default public budget is 600 a minute).
 */
const UNREACHED = '100000000/60';

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
  // `env` holds for every start; a restart adds its own.
  const start = (extra: Record<string, string>) =>
    startServerProcess(
      {
        DATA_DIR: dataDir,
        LOG_LEVEL: 'warn',
        RATE_LIMIT_PUBLIC: UNREACHED,
        RATE_LIMIT_MCP: UNREACHED,
        RATE_LIMIT_AUTH: UNREACHED,
        RATE_LIMIT_CREATOR: UNREACHED,
        ...(postgres ? { DATABASE_URL: postgres.url } : {}),
        ...env,
        ...extra,
      },
      { built: true },
    );
  try {
    if (database === 'postgres') postgres = await createBenchDatabase();
    let server: ServerProcess = await start({});
    const repo402: Repo402Process = {
      url: server.url,
      pid: server.child.pid!,
      dataDir,
      database,
      restart: async (extra) => {
        await server.stop();
        server = await start(extra);
        repo402.url = server.url;
        repo402.pid = server.child.pid!;
      },
      stop: async () => {
        await server.stop();
        await cleanUp();
      },
    };
    return repo402;
  } catch (error) {
    await cleanUp();
    throw error;
  }
}
