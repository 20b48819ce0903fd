import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyBaseLogger, FastifyInstance, RawServerDefault } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Redis } from 'ioredis';
import type { PublicClient } from 'viem';
import type { Config } from './config.js';
import type { Database } from './db/connect.js';
import type { Repositories } from './git/repository-operations.js';
import type { GitHubClient } from './github/client.js';
import type { BlobStore } from './platform/blobs/blobs.js';
import type { Caches } from './platform/cache/caches.js';
import type { ListingEvents } from './platform/cache/listing-events.js';
import type { Clock } from './platform/clock.js';
import type { JobQueue } from './platform/jobs.js';
import type { PauseSwitch } from './platform/limits/pause.js';
import type { Metrics } from './platform/metrics/metrics.js';
import type { Readiness } from './platform/readiness.js';
import type { ReleaseInspector } from './releases/inspection/inspector.js';
import type { HostLookup } from './webhooks/addresses.js';
import type { WebhookAudience } from './webhooks/audience.js';
import type { PaymentRail } from './x402/rail.js';

/**
 * What the process opens once and every domain shares, built by `createContext()` (src/runtime.ts)
 * for the server, the worker, CLI commands and tests alike.
 */
export interface AppDeps {
  log: FastifyBaseLogger;
  database: Database;
  clock: Clock;
  pause: PauseSwitch;
  /** Present when REDIS_URL is set: shared rate-limit counters. */
  redis?: Redis;
  /** Key material for HMAC-signed tokens (quotes, download URLs). */
  appSecret: Buffer;
  /** Release artifacts and SBOMs. */
  blobs: BlobStore;
  /** Background jobs; absent in processes that only run a one-off command. */
  jobs?: JobQueue<AppContext>;
  /** A Base chain client (BASE_RPC_URL, or the devnet chain): smart-wallet signatures verify through it. */
  chainClient?: PublicClient;
  /**
   * The payment rail: facilitator, chain and payTo (devnet or mainnet), opened on the first call
   * and shared after. Serve and worker open it at start, one-off commands on first use (on devnet,
   * opening replays the chain's journal).
   */
  rail(): Promise<PaymentRail>;
  /** Documents cached for this app (its base URL, its database); never shared with another app in the process. */
  caches: Caches;
  /** Announces a listing's public change to every cache, in this process and (PostgreSQL) the others. */
  listingEvents: ListingEvents;
  /** The GitHub App behind `source: github` listings, when one is configured (GITHUB_APP_ID…). */
  github?: GitHubClient;
  /** The hosted repositories: on this disk, or at the git host (GIT_HOST_URL). */
  repositories: Repositories;
  /** Analyses and scans a cut release (`releaseInspector`); tests hand the cut a stand-in. */
  inspectRelease: ReleaseInspector;
  /** This process's Prometheus metrics (docs/OPERATIONS.md, "Metrics and readiness"). */
  metrics: Metrics;
  /** Whether this process can do its work now: every dependency it uses, and the pause. */
  readiness(): Promise<Readiness>;
  /** Listings and holdings as the webhooks see them (built from listings and purchases in src/runtime.ts). */
  webhookAudience: WebhookAudience;
  /**
   * The resolver webhook requests use (subscription checks and every delivery); the system's when
   * absent. Tests hand a stand-in: they never resolve a real name.
   */
  webhookLookup?: HostLookup;
}

export interface AppContext extends AppDeps {
  config: Config;
}

export type App = FastifyInstance<
  RawServerDefault,
  IncomingMessage,
  ServerResponse,
  FastifyBaseLogger,
  ZodTypeProvider
>;
