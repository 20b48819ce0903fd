import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { Redis } from 'ioredis';
import type { DestinationStream } from 'pino';
import type { Config } from './config.js';
import type { AppContext } from './context.js';
import { connectDatabase, type Database } from './db/connect.js';
import { configuredDatabase } from './db/existing.js';
import { migrate } from './db/migrate.js';
import { observeChainExceptions } from './earnings/metrics.js';
import { localRepositories, remoteRepositories } from './git/repositories.js';
import { GitHubClient } from './github/client.js';
import { JOBS } from './jobs.js';
import { findPublicListing } from './listings/public-listings.js';
import { listingById } from './listings/service.js';
import { openBlobStore } from './platform/blobs/config.js';
import { Caches } from './platform/cache/caches.js';
import { ListingEvents } from './platform/cache/listing-events.js';
import { type Clock, systemClock } from './platform/clock.js';
import { sharedWhileRunning } from './platform/concurrency.js';
import { type AnyJobSpec, JobQueue } from './platform/jobs.js';
import { checkComplianceConfig } from './platform/limits/compliance.js';
import { PauseSwitch } from './platform/limits/pause.js';
import { REDIS_COMMAND_TIMEOUT_MS } from './platform/limits/rate-limit-counters.js';
import { createLogger } from './platform/logger.js';
import { Metrics } from './platform/metrics/metrics.js';
import { readiness } from './platform/readiness.js';
import { loadOrCreateSecretFile } from './platform/secret-file.js';
import { holdingOf, isEntitled } from './purchases/holdings.js';
import { observeSettlementBacklog } from './purchases/metrics.js';
import { releaseInspector } from './releases/inspection/inspect.js';
import type { WebhookAudience } from './webhooks/audience.js';
import { countingFailures } from './x402/facilitator-client.js';
import type { PaymentRail } from './x402/rail.js';

export interface Runtime {
  ctx: AppContext;
  close(): Promise<void>;
}

export interface ContextOptions {
  clock?: Clock;
  /**
   * An open, migrated database that the context then owns and closes (tests: a database of their
   * own); otherwise DATABASE_URL, or PGlite in DATA_DIR, opened and migrated here.
   */
  database?: Database;
  /** Otherwise APP_SECRET, or the secret kept in DATA_DIR. */
  appSecret?: Buffer;
  /**
   * `none` for one-off commands; `queue` to send jobs; `workers` to also run them here (those that
   * need the repositories only when this process keeps them); `repository-workers` for the git
   * host, which runs only the jobs that need them.
   */
  jobs?: 'none' | 'queue' | 'workers' | 'repository-workers';
  /** The jobs the queue serves; every domain's by default (tests run a few of their own). */
  jobSpecs?: AnyJobSpec<AppContext>[];
  /** Open the payment rail at start; by default only processes with a job queue do. */
  openPayments?: boolean;
  /** Where log lines go; standard output by default (tests read what was logged). */
  logDestination?: DestinationStream;
}

/**
 * Builds the one `AppContext` of a process (database with migrations applied, Redis, secrets, the
 * job queue, the payment rail) and closes it again in reverse order. `serve`, `worker`, local CLI
 * commands and the tests' apps all start here.
 */
export async function createContext(config: Config, options: ContextOptions = {}): Promise<Runtime> {
  try {
    await checkComplianceConfig(config.compliance);
    await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
  } catch (error) {
    await options.database?.close();
    throw error;
  }
  const log = createLogger(config.logLevel, options.logDestination);
  const database = options.database ?? (await openDatabase(config));
  const listingEvents = new ListingEvents();
  const caches = new Caches(listingEvents);
  let stopListening: (() => Promise<void>) | undefined;
  let redis: Redis | undefined;
  let jobs: JobQueue<AppContext> | undefined;
  let pause: PauseSwitch | undefined;
  let rail: Promise<PaymentRail> | undefined;
  const close = async () => {
    pause?.stop();
    await jobs?.stop(config.shutdownTimeoutMs);
    await (await rail?.catch(() => undefined))?.devnet?.close();
    await stopListening?.();
    caches.close();
    redis?.disconnect();
    await database.close();
  };
  try {
    stopListening = await shareListingChanges(database, listingEvents, log);
    pause = new PauseSwitch(database.db, config.paused);
    await pause.refresh();
    const appSecret =
      options.appSecret ??
      (config.appSecret
        ? Buffer.from(config.appSecret, 'hex')
        : // Kept beside the data; several API processes must set APP_SECRET instead.
          await loadOrCreateSecretFile(path.join(config.dataDir, 'app-secret')));
    if (config.redisUrl) {
      // Without an offline queue a dead Redis fails fast instead of stalling requests, and with a
      // command timeout so does one that keeps its connection but stops answering. A call that
      // timed out was counted in the process instead: it is not sent again on a new connection.
      redis = new Redis(config.redisUrl, {
        maxRetriesPerRequest: 1,
        enableOfflineQueue: false,
        autoResendUnfulfilledCommands: false,
        commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
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
    const takesPayments = options.openPayments ?? mode !== 'none';
    if (mode !== 'none') jobs = await JobQueue.open(database, options.jobSpecs ?? JOBS, log);
    const clock = options.clock ?? systemClock;
    const metrics = processMetrics(config, jobs, takesPayments, { database, clock });
    const blobs = await openBlobStore(config);
    const ctx: AppContext = {
      config,
      log,
      database,
      clock,
      pause,
      redis,
      appSecret,
      jobs,
      chainClient,
      blobs,
      caches,
      listingEvents,
      github: config.github ? new GitHubClient(config.github, log) : undefined,
      inspectRelease: releaseInspector({ config, database, clock, blobs }),
      webhookAudience: webhookAudience(database),
      metrics,
      // A burst of probes (load balancer, supervisor, the metrics listener) asks the facilitator,
      // the chain and the bucket once, not once per probe.
      readiness: sharedWhileRunning(() => readiness(ctx, { payments: takesPayments })),
      repositories: config.gitHostUrl
        ? remoteRepositories(config.gitHostUrl, appSecret)
        : localRepositories(config),
      rail: () => {
        rail ??= import('./x402/rail.js')
          .then(({ openPaymentRail }) =>
            openPaymentRail(config.payments, { database, appSecret, baseClient: chainClient }),
          )
          .then(
            (opened) => {
              // On devnet, smart-wallet signatures verify against the devnet chain.
              if (opened.devnet) ctx.chainClient = opened.devnet.publicClient;
              opened.facilitator = countingFailures(opened.facilitator, metrics.facilitatorErrors);
              return opened;
            },
            (error: unknown) => {
              // Not opened (on mainnet the chain is asked for the token's domain): the next call tries again.
              rail = undefined;
              throw error;
            },
          );
        return rail;
      },
    };
    // Processes that serve or run jobs open the payment rail now (devnet: the chain replays its
    // journal); one-off commands open it on first use.
    if (takesPayments) {
      await ctx.rail();
    }
    // Before any job runs: a restored database learns what the chain did since its backup.
    if (takesPayments && mode !== 'none') {
      await (await import('./backup/after-restore.js')).reconcileAtStart(ctx);
    }
    if (mode === 'workers') {
      await jobs!.startWorkers(ctx, log, (spec) => !(spec.needsRepositories && config.gitHostUrl));
    } else if (mode === 'repository-workers') {
      // The git host is the one process that runs these: any still active are its own, orphaned.
      const needsRepositories = (spec: AnyJobSpec<AppContext>) => spec.needsRepositories === true;
      await jobs!.failOrphaned(needsRepositories, log);
      await jobs!.startWorkers(ctx, log, needsRepositories);
    }
    return { ctx, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** What webhooks/ may know of listings and holdings, from the domains above it. */
function webhookAudience(database: Database): WebhookAudience {
  return {
    async findListing(owner, slug) {
      const listing = await findPublicListing(database.db, owner, slug);
      return listing ? { id: listing.id, owner: listing.owner, slug: listing.slug } : undefined;
    },
    async listingName(listingId) {
      const listing = await listingById(database.db, listingId);
      return listing ? { owner: listing.owner, slug: listing.slug } : undefined;
    },
    async holds(wallet, listingId, version) {
      const holding = await holdingOf(database, wallet, listingId);
      if (version !== undefined) return isEntitled(holding, version);
      return holding.versions.length > 0 || holding.allVersionsFrom !== undefined;
    },
  };
}

/**
 * The process's metrics: every counter always (an addition each), the gauges that need a query for
 * what this process does, and Node's process metrics when an operator exposes them.
 */
function processMetrics(
  config: Config,
  jobs: JobQueue<AppContext> | undefined,
  takesPayments: boolean,
  deps: { database: Database; clock: Clock },
): Metrics {
  const metrics = new Metrics();
  if (config.metrics.token || config.metrics.port !== undefined) metrics.collectProcessMetrics();
  if (takesPayments) {
    observeSettlementBacklog({ metrics, ...deps });
    observeChainExceptions({ metrics, ...deps });
  }
  if (jobs) {
    metrics.readGauge('repo402_job_queue_depth', 'Jobs waiting to run, per queue', ['queue'], async () =>
      [...(await jobs.depths())].map(([queue, value]) => ({ labels: { queue }, value })),
    );
  }
  return metrics;
}

const LISTING_CHANGES = 'repo402_listing_changed';

/**
 * Listing changes travel between processes on one PostgreSQL database as `NOTIFY`: sent when this
 * process announces one, heard from every other (ListingEvents). PGlite serves one process.
 */
async function shareListingChanges(
  database: Database,
  events: ListingEvents,
  log: FastifyBaseLogger,
): Promise<(() => Promise<void>) | undefined> {
  if (database.driver !== 'postgres') return undefined;
  const stop = await database.listen(LISTING_CHANGES, (payload) => events.deliver(payload));
  events.connect({
    publish(payload) {
      database.query('select pg_notify($1, $2)', [LISTING_CHANGES, payload]).catch((err: unknown) => {
        // Other processes then serve the previous document until their caches expire (one second).
        log.warn({ err }, 'could not tell other processes of a listing change');
      });
    },
  });
  return stop;
}

async function openDatabase(config: Config): Promise<Database> {
  const database = await connectDatabase(configuredDatabase(config));
  try {
    await migrate(database);
    return database;
  } catch (error) {
    await database.close();
    throw error;
  }
}
