import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { DestinationStream } from 'pino';
import { buildApp } from '../../src/app.js';
import { type Config, loadConfig } from '../../src/config.js';
import type { App, AppContext } from '../../src/context.js';
import { connectDatabase } from '../../src/db/connect.js';
import { migrate } from '../../src/db/migrate.js';
import type { AnyJobSpec } from '../../src/platform/jobs.js';
import { createContext } from '../../src/runtime.js';
import { ManualClock } from './clock.js';
import { type Backend, openTestDatabase, type TestDatabase } from './db.js';

export const TEST_BASE_URL = 'http://repo402.test';

/** Rate-limit stores: memory always; Redis too when TEST_REDIS_URL is set (.ci/run sets it to the machine's Redis). */
export const RATE_LIMIT_STORES: { store: string; env: Record<string, string> }[] = [
  { store: 'memory', env: {} },
  ...(process.env.TEST_REDIS_URL ? [{ store: 'redis', env: { REDIS_URL: process.env.TEST_REDIS_URL } }] : []),
];

export interface TestApp {
  app: App;
  ctx: AppContext;
  config: Config;
  database: TestDatabase;
  clock: ManualClock;
  dataDir: string;
  close(): Promise<void>;
}

export interface TestAppOptions {
  backend?: Backend;
  /** Environment overrides, as an operator would set them. */
  env?: Record<string, string>;
  /** Adds routes before the app is ready (tests of platform mechanisms). */
  extend?: (app: App, ctx: AppContext) => void | Promise<void>;
  /** Start the job queue with in-process workers: every domain's jobs, or the ones given. */
  jobs?: boolean | AnyJobSpec<AppContext>[];
  /**
   * PGlite on disk in `<dataDir>/db`, where `repo402 serve` keeps it, so a server process can be
   * started on the same DATA_DIR after `close()`; the caller then removes `dataDir`.
   */
  onDisk?: boolean;
  /** Open the payment rail before the app is built (payment tests); otherwise on first use. */
  openPayments?: boolean;
  /** An open, migrated database the app takes over and closes (a restored copy); otherwise one of its own. */
  database?: TestDatabase;
  /** Receives every log line (set LOG_LEVEL in `env` to see more than nothing). */
  logDestination?: DestinationStream;
}

/**
 * The real application on a database of its own, with a manual clock and quiet logs. Should it
 * fail to start, what it opened is closed and its data directory removed, `onDisk` or not: the
 * caller never received it.
 */
export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'repo402-test-'));
  let closeContext: (() => Promise<void>) | undefined;
  try {
    const config = loadConfig({
      DATA_DIR: dataDir,
      BASE_URL: TEST_BASE_URL,
      LOG_LEVEL: 'silent',
      // Jobs a test leaves running are not waited for long at close.
      SHUTDOWN_TIMEOUT_MS: '2000',
      // Tests never reach the internet: no hourly advisory sync, even in mainnet mode.
      OSV_SYNC: 'false',
      ...options.env,
    });
    const database = options.database
      ? options.database
      : options.onDisk
        ? await openDiskDatabase(path.join(dataDir, 'db'))
        : await openTestDatabase(options.backend ?? 'pglite');
    const clock = new ManualClock();
    // It closes the database itself should it fail.
    const { ctx, close } = await createContext(config, {
      clock,
      database,
      appSecret: Buffer.alloc(32, 7),
      jobs: options.jobs ? 'workers' : 'none',
      jobSpecs: Array.isArray(options.jobs) ? options.jobs : undefined,
      openPayments: options.openPayments ?? false,
      logDestination: options.logDestination,
    });
    closeContext = close;
    const app = await buildApp(ctx);
    try {
      await options.extend?.(app, ctx);
      await app.ready();
    } catch (error) {
      await app.close();
      throw error;
    }
    return {
      app,
      ctx,
      config,
      database,
      clock,
      dataDir,
      async close() {
        await app.close();
        await close();
        if (!options.onDisk) await rm(dataDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await closeContext?.();
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
}

async function openDiskDatabase(dir: string): Promise<TestDatabase> {
  const database = await connectDatabase({ kind: 'pglite', dataDir: dir });
  await migrate(database);
  return database;
}
