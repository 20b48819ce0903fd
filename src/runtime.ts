import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Redis } from 'ioredis';
import type { Config } from './config.js';
import type { AppContext } from './context.js';
import { connectDatabase } from './db/connect.js';
import { migrate } from './db/migrate.js';
import { JOBS } from './jobs.js';
import { openBlobStore } from './platform/blobs-config.js';
import { type Clock, systemClock } from './platform/clock.js';
import { checkComplianceConfig } from './platform/compliance.js';
import { JobQueue } from './platform/jobs.js';
import { createLogger } from './platform/logger.js';
import { PauseSwitch } from './platform/pause.js';
import { releaseInspector } from './releases/inspection/inspect.js';

export interface Runtime {
  ctx: AppContext;
  close(): Promise<void>;
}

export interface RuntimeOptions {
  clock?: Clock;
  /** `none` for one-off commands; `queue` to send jobs; `workers` to also run them here. */
  jobs?: 'none' | 'queue' | 'workers';
}

/**
 * Opens what a repo402 process needs (database with migrations applied, Redis, secrets, the job
 * queue) and closes it again in reverse order. `serve`, `worker` and local CLI commands start here.
 */
export async function openRuntime(config: Config, options: RuntimeOptions = {}): Promise<Runtime> {
  await checkComplianceConfig(config.compliance);
  const log = createLogger(config.logLevel);
  await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
  const database = await connectDatabase(
    config.databaseUrl
      ? { kind: 'postgres', url: config.databaseUrl }
      : { kind: 'pglite', dataDir: path.join(config.dataDir, 'db') },
  );
  let redis: Redis | undefined;
  let jobs: JobQueue | undefined;
  const close = async () => {
    await jobs?.stop(config.shutdownTimeoutMs);
    redis?.disconnect();
    await database.close();
  };
  try {
    await migrate(database);
    const pause = new PauseSwitch(database.db, config.paused);
    await pause.refresh();
    const appSecret = config.appSecret
      ? Buffer.from(config.appSecret, 'hex')
      : await loadOrCreateSecret(path.join(config.dataDir, 'app-secret'));
    if (config.redisUrl) {
      // Without an offline queue a dead Redis fails fast instead of stalling requests.
      redis = new Redis(config.redisUrl, {
        maxRetriesPerRequest: 1,
        enableOfflineQueue: false,
        lazyConnect: true,
      });
      redis.on('error', () => {});
      await redis.connect().catch(() => {});
    }
    // Loaded only when configured: viem is large, and operator commands need none of it.
    const chainClient = config.baseRpcUrl
      ? (await import('./platform/chain-client.js')).baseChainClient(config.baseRpcUrl)
      : undefined;
    const mode = options.jobs ?? 'none';
    // Processes that serve or run jobs open the payment rail now (devnet: the chain replays its
    // journal); one-off commands open it on first use (src/payments/context.ts).
    const payments =
      mode === 'none'
        ? undefined
        : await (await import('./payments/rail.js')).openPaymentRail(config.payments, {
            database,
            appSecret,
            baseClient: chainClient,
          });
    if (mode !== 'none') jobs = await JobQueue.open(database, JOBS, log);
    const clock = options.clock ?? systemClock;
    const ctx: AppContext = {
      config,
      log,
      database,
      clock,
      pause,
      redis,
      appSecret,
      jobs,
      // On devnet, smart-wallet signatures verify against the devnet chain.
      chainClient: payments?.devnet?.publicClient ?? chainClient,
      payments,
      blobs: await openBlobStore(config),
      inspectRelease: releaseInspector({ config, database, clock }),
    };
    if (mode === 'workers') await jobs!.startWorkers(ctx, log);
    return {
      ctx,
      async close() {
        pause.stop();
        await close();
      },
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** A per-installation secret kept beside the data; several API processes must set APP_SECRET instead. */
async function loadOrCreateSecret(file: string): Promise<Buffer> {
  try {
    return Buffer.from((await readFile(file, 'utf8')).trim(), 'hex');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const secret = randomBytes(32);
  try {
    await writeFile(file, secret.toString('hex'), { mode: 0o600, flag: 'wx' });
    return secret;
  } catch (error) {
    // Another process created it first: use theirs.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return loadOrCreateSecret(file);
    throw error;
  }
}
