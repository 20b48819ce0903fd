import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { buildApp } from '../../src/app.js';
import { type Config, loadConfig } from '../../src/config.js';
import type { App, AppContext } from '../../src/context.js';
import { connectDatabase } from '../../src/db/connect.js';
import { migrate } from '../../src/db/migrate.js';
import { JOBS } from '../../src/jobs.js';
import { openBlobStore } from '../../src/platform/blobs-config.js';
import { baseChainClient } from '../../src/platform/chain-client.js';
import { type AnyJobSpec, JobQueue } from '../../src/platform/jobs.js';
import { createLogger } from '../../src/platform/logger.js';
import { PauseSwitch } from '../../src/platform/pause.js';
import { releaseInspector } from '../../src/releases/inspection/inspect.js';
import { ManualClock } from './clock.js';
import { type Backend, openTestDatabase, type TestDatabase } from './db.js';

export const TEST_BASE_URL = 'http://repo402.test';

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
  jobs?: boolean | AnyJobSpec[];
  /**
   * PGlite on disk in `<dataDir>/db`, where `repo402 serve` keeps it, so a server process can be
   * started on the same DATA_DIR after `close()`; the caller then removes `dataDir`.
   */
  onDisk?: boolean;
}

/** The real application on a database of its own, with a manual clock and quiet logs. */
export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'repo402-test-'));
  const config = loadConfig({
    DATA_DIR: dataDir,
    BASE_URL: TEST_BASE_URL,
    LOG_LEVEL: 'silent',
    ...options.env,
  });
  const database = options.onDisk
    ? await openDiskDatabase(path.join(dataDir, 'db'))
    : await openTestDatabase(options.backend ?? 'pglite');
  const clock = new ManualClock();
  const pause = new PauseSwitch(database.db, config.paused);
  await pause.refresh();
  const redis = config.redisUrl ? new Redis(config.redisUrl, { maxRetriesPerRequest: 1 }) : undefined;
  redis?.on('error', () => {});
  const log = createLogger(config.logLevel);
  const chainClient = config.baseRpcUrl ? baseChainClient(config.baseRpcUrl) : undefined;
  const ctx: AppContext = {
    config,
    log,
    database,
    clock,
    pause,
    redis,
    appSecret: Buffer.alloc(32, 7),
    chainClient,
    blobs: await openBlobStore(config),
    inspectRelease: releaseInspector({ config, database, clock }),
  };
  if (options.jobs) {
    ctx.jobs = await JobQueue.open(database, options.jobs === true ? JOBS : options.jobs, log);
    await ctx.jobs.startWorkers(ctx, log);
  }
  const app = await buildApp(ctx);
  await options.extend?.(app, ctx);
  await app.ready();
  return {
    app,
    ctx,
    config,
    database,
    clock,
    dataDir,
    async close() {
      await app.close();
      await ctx.jobs?.stop(2000);
      redis?.disconnect();
      await database.close();
      if (!options.onDisk) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

async function openDiskDatabase(dir: string): Promise<TestDatabase> {
  const database = await connectDatabase({ kind: 'pglite', dataDir: dir });
  await migrate(database);
  return database;
}
