import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { buildApp } from '../../src/app.js';
import { type Config, loadConfig } from '../../src/config.js';
import type { App, AppContext } from '../../src/context.js';
import { baseChainClient } from '../../src/platform/chain-client.js';
import { PauseSwitch } from '../../src/platform/pause.js';
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
  const database = await openTestDatabase(options.backend ?? 'pglite');
  const clock = new ManualClock();
  const pause = new PauseSwitch(database.db, config.paused);
  await pause.refresh();
  const redis = config.redisUrl ? new Redis(config.redisUrl, { maxRetriesPerRequest: 1 }) : undefined;
  redis?.on('error', () => {});
  const chainClient = config.baseRpcUrl ? baseChainClient(config.baseRpcUrl) : undefined;
  const ctx: AppContext = {
    config,
    database,
    clock,
    pause,
    redis,
    appSecret: Buffer.alloc(32, 7),
    chainClient,
  };
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
      redis?.disconnect();
      await database.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
