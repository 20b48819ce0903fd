import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { BASE, BASE_SEPOLIA, PAYMENT_NETWORKS, type PaymentNetwork } from './platform/networks.js';

/**
 * The one configuration, read from the environment once at start-up. A bad value stops start-up
 * with a message naming the variable, so a typo never silently becomes a default.
 */

const port = z.coerce.number().int().min(1).max(65535);
const positiveInt = z.coerce.number().int().positive();
const bool = z.stringbool({ truthy: ['true', '1', 'yes', 'on'], falsy: ['false', '0', 'no', 'off'] });

/** `<max>/<seconds>`: at most `max` requests per fixed window of `seconds`. */
const rateLimit = z
  .string()
  .regex(/^[1-9][0-9]{0,8}\/[1-9][0-9]{0,6}$/, 'expected <max>/<seconds>, for example 300/60')
  .transform((value) => {
    const [max, windowSeconds] = value.split('/').map(Number) as [number, number];
    return { max, windowSeconds };
  });

/** x402's public facilitator for test networks (Base Sepolia among them); it asks for no key. */
export const TESTNET_FACILITATOR_URL = 'https://x402.org/facilitator';

const url = (protocols: string[]) =>
  z.string().refine(
    (value) => {
      try {
        return protocols.includes(new URL(value).protocol);
      } catch {
        return false;
      }
    },
    `expected a ${protocols.join(' or ')}// URL`,
  );

/**
 * Every variable the service reads, each described once, in its `.meta()`: `description`
 * (Markdown, links relative to docs/); `unset`, when the schema has no default, what applies
 * without the variable; `default`, when the schema's default is not a plain value, that default as
 * it is written in the environment. docs/CONFIGURATION.md is rendered from them by
 * scripts/config-reference.ts (`npx tsx scripts/config-reference.ts`), which also names each
 * variable's section; test/config-reference.test.ts fails while the document is stale.
 */
export const EnvSchema = z.object({
  PORT: port.default(8402).meta({ description: 'HTTP port' }),
  HOST: z
    .string()
    .min(1)
    .default('localhost')
    .meta({ description: 'Interface to listen on (`0.0.0.0` to accept remote connections)' }),
  SSH_PORT: port.default(2222).meta({ description: 'Port of the hosted-repository SSH server' }),
  DATA_DIR: z.string().min(1).default('./data').meta({
    description:
      'Where the process keeps its embedded database, generated secrets, control socket, repositories and blobs; operator commands must be run with the server\'s ([OPERATIONS.md](OPERATIONS.md), "Operator commands")',
  }),
  BASE_URL: url(['http:', 'https:']).optional().meta({
    description: 'Public base URL, used in every link, `docs_url` and 402 body',
    unset: '`http://localhost:$PORT`',
  }),
  DATABASE_URL: url(['postgres:', 'postgresql:'])
    .optional()
    .meta({ description: '`postgres://…` to use a PostgreSQL server', unset: 'PGlite in `$DATA_DIR/db`' }),
  REDIS_URL: url(['redis:', 'rediss:']).optional().meta({
    description:
      '`redis://…` (or `rediss://`) to share rate-limit counters between processes; while it is unreachable each process counts alone, logged ([OPERATIONS.md](OPERATIONS.md), "Scaling out")',
    unset: 'counters in memory',
  }),
  LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
    .default('info')
    .meta({ description: '`fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`' }),
  PAUSED: bool.default(false).meta({
    description:
      'Start paused: every route except `/api/health` answers `503 paused`. `repo402 resume` does not lift it; restart without it',
  }),
  // Fastify's hop count is refused on purpose: it would believe a client that reaches the port directly.
  TRUST_PROXY: z
    .string()
    .default('false')
    .transform((value): boolean | string =>
      value === 'true' || value === 'false' ? value === 'true' : value,
    )
    .meta({
      description:
        'Which address the rate limits count as the client. `false`: the TCP peer; `X-Forwarded-For` is ignored. The comma-separated addresses/CIDRs of the proxies in front: from one of them, the `X-Forwarded-For` entry nearest the right that is not one of them (the leftmost when all are, the peer without the header); from any other peer, that peer, whatever it forwards. `true`: the leftmost entry, from any peer (the peer without the header), so a client can choose the address its rate limits count unless the proxy replaces the header (warned at start). No hop count: it would trust a client that reaches the port directly. Tested in `test/platform/trust-proxy.test.ts`',
    }),
  // Operations (docs/OPERATIONS.md, "Metrics and readiness").
  METRICS_TOKEN: z.string().trim().min(32, 'expected at least 32 characters').max(512).optional().meta({
    description:
      "Serves this process's Prometheus metrics at `GET /metrics` on the public listener to requests carrying `Authorization: Bearer <METRICS_TOKEN>` (any other request gets `404`); also required on `METRICS_PORT` when set",
    unset: '`/metrics` is `404` on the public listener',
  }),
  METRICS_PORT: z.coerce.number().int().min(0).max(65_535).optional().meta({
    description:
      'A second listener, on `METRICS_HOST`, serving `GET /metrics` and `GET /ready` for this process (serve, worker or git-host): how the worker and the git host are watched',
    unset: 'no second listener',
  }),
  METRICS_HOST: z.string().min(1).default('127.0.0.1').meta({
    description: 'Interface of the `METRICS_PORT` listener: keep it internal',
  }),
  APP_SECRET: z
    .string()
    .regex(/^[0-9a-fA-F]{64,}$/, 'expected at least 32 bytes as hex (64+ hex characters)')
    .optional()
    .meta({
      description:
        'Key of every signed token: 32+ bytes as hex (64+ hex characters); set the same value on every process of a deployment (API processes, git host, workers)',
      unset: 'generated into `$DATA_DIR/app-secret`',
    }),
  ATTESTATION_KEY: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/, 'expected an Ed25519 private key: its 32-byte seed as 64 hex characters')
    .optional()
    .meta({
      description:
        'Ed25519 key that signs release attestations: its 32-byte seed as 64 hex characters (`openssl rand -hex 32`); set the same value on every process that cuts releases (only the git host, in the split topology); changing it rotates the key ([ATTESTATIONS.md](ATTESTATIONS.md))',
      unset: 'generated into `$DATA_DIR/attestation-key`',
    }),
  SHUTDOWN_TIMEOUT_MS: positiveInt.default(10_000).meta({
    description:
      'How long SIGTERM waits for in-flight requests, in milliseconds; past it the process exits with status 1',
  }),
  WORKERS: bool.default(true).meta({
    description:
      'Whether `serve` also runs the background job workers; `false` on API processes when `repo402 worker` runs them ([OPERATIONS.md](OPERATIONS.md), "Scaling out")',
  }),
  GIT_HOST_URL: url(['http:', 'https:']).optional().meta({
    description:
      'The git host\'s `http://host:port` (`repo402 git-host`): this process keeps no repositories and runs no SSH server; needs `DATABASE_URL`, `S3_BUCKET`, `APP_SECRET` and `PAYMENTS_MODE=mainnet` or `testnet` ([OPERATIONS.md](OPERATIONS.md), "Scaling out")',
    unset: 'repositories in `$DATA_DIR/repos`',
  }),
  RATE_LIMIT_PUBLIC: rateLimit.default({ max: 600, windowSeconds: 60 }).meta({
    description:
      "Public buyer routes: `<max>/<seconds>`, a fixed window per client address (an IPv6 client's /64) and route (each route has its own budget; a `HEAD` shares its `GET`'s); over it, `429`",
    default: '600/60',
  }),
  RATE_LIMIT_AUTH: rateLimit.default({ max: 60, windowSeconds: 60 }).meta({
    description:
      "Challenge, key-rotation and registration routes, as `RATE_LIMIT_PUBLIC` (registration's signed attempts are also held to 5 per hour per address)",
    default: '60/60',
  }),
  RATE_LIMIT_CREATOR: rateLimit.default({ max: 300, windowSeconds: 60 }).meta({
    description: 'Creator routes, as `RATE_LIMIT_PUBLIC`',
    default: '300/60',
  }),
  RATE_LIMIT_MCP: rateLimit.default({ max: 300, windowSeconds: 60 }).meta({
    description: 'The MCP endpoint (`/api/mcp`), as `RATE_LIMIT_PUBLIC`',
    default: '300/60',
  }),
  MCP_STREAM_SECONDS: positiveInt
    .max(3600)
    .default(300)
    .meta({ description: 'Lifetime of one quiet MCP notification stream (`GET /api/mcp`), in seconds' }),
  MCP_STREAMS_PER_IP: positiveInt.max(1000).default(4).meta({
    description: "Open MCP notification streams allowed per client address (an IPv6 client's /64)",
  }),
  // Identity and compliance.
  BASE_RPC_URL: url(['http:', 'https:']).optional().meta({
    description:
      'JSON-RPC endpoint of the chain paid on (Base, or Base Sepolia on testnet): required on mainnet and testnet (settlements whose answer was lost are decided by reading the chain; the rail checks its chain id at start); enables smart-wallet (EIP-1271, ERC-6492) signatures',
    unset: 'plain wallet signatures only',
  }),
  SANCTIONS_FILE: z.string().min(1).optional().meta({
    description:
      'File of sanctioned addresses, one per line, `#` comments; read at start (a bad file stops start-up) and re-read on change',
    unset: 'no list',
  }),
  BLOCKED_COUNTRIES: z
    .string()
    .regex(/^[A-Za-z]{2}(\s*,\s*[A-Za-z]{2})*$/, 'expected comma-separated two-letter country codes')
    .optional()
    .meta({
      description:
        'Comma-separated ISO 3166-1 alpha-2 codes answered with `451`; the country comes from `COUNTRY_HEADER`',
      unset: 'none',
    }),
  COUNTRY_HEADER: z
    .string()
    .regex(/^[A-Za-z0-9-]+$/, 'expected a header name')
    .optional()
    .meta({
      description: "Header a trusted proxy sets to the client's country, e.g. `CF-IPCountry`",
      unset: 'no jurisdiction check',
    }),
  SMTP_URL: url(['smtp:', 'smtps:']).optional().meta({
    description: '`smtp://user:pass@host:port` (or `smtps://`) for account announcements',
    unset: 'messages are logged and kept in the database',
  }),
  MAIL_FROM: z
    .string()
    .min(3)
    .optional()
    .meta({ description: 'Sender of those messages', unset: '`repo402 <no-reply@<BASE_URL host>>`' }),
  // Signed webhooks (docs/WEBHOOKS.md).
  WEBHOOK_RETRY_DELAYS_SECONDS: z
    .string()
    .regex(/^\d+(,\d+)*$/, 'expected comma-separated whole seconds, e.g. 30,120,600')
    .default('30,300,1800,7200,21600')
    .meta({
      description:
        'Seconds to wait before each retry of a failed webhook delivery; when the last retry fails too, the subscription is disabled with the reason',
    }),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000).meta({
    description: 'How long a webhook receiver may take to answer before the attempt counts as failed',
  }),
  WEBHOOK_ALLOW_PRIVATE_ADDRESSES: bool.default(false).meta({
    description:
      'Development only: let webhooks reach loopback, private and link-local addresses (a receiver on this machine). Never in production: it lets a subscriber make the server call its own network',
  }),
  // Payments (docs/PAYMENTS.md).
  PAYMENTS_MODE: z.enum(['devnet', 'testnet', 'mainnet']).default('devnet').meta({
    description:
      "`devnet`: a local chain in-process (Hardhat's EDR, a USDC-compatible token, the reference facilitator), so a fresh install sells and settles for real; `testnet`: staging on Base Sepolia (`eip155:84532`) with Circle's test USDC through `FACILITATOR_URL`, to rehearse before real money; `mainnet`: Base (`eip155:8453`) through `FACILITATOR_URL` ([PAYMENTS.md](PAYMENTS.md))",
  }),
  FACILITATOR_URL: url(['http:', 'https:'])
    .optional()
    .meta({
      description:
        'An x402 facilitator; required on mainnet (with `PLATFORM_PAYOUT_ADDRESS` and `BASE_RPC_URL`), optional on testnet and on devnet (instead of the in-process one)',
      unset: `the in-process one on devnet; \`${TESTNET_FACILITATOR_URL}\` (x402's public testnet facilitator) on testnet`,
    }),
  CDP_API_KEY_ID: z.string().trim().min(1).max(200).optional().meta({
    description:
      "Coinbase Developer Platform API key id: with `CDP_API_KEY_SECRET`, every request to `FACILITATOR_URL` carries a fresh CDP JWT for its method, host and path (Coinbase's facilitator, `https://api.cdp.coinbase.com/platform/v2/x402`, requires it)",
    unset: 'facilitator requests carry no credentials',
  }),
  CDP_API_KEY_SECRET: z.string().trim().min(1).max(4000).optional().meta({
    description:
      'The CDP API key secret: an Ed25519 key in base64 or an EC key in PEM, as Coinbase issues it; set with `CDP_API_KEY_ID`',
    unset: 'facilitator requests carry no credentials',
  }),
  USDC_CONTRACT: z
    .string()
    .regex(/^0x[0-9a-fA-F]{40}$/, 'expected a 0x-prefixed 20-byte address')
    .optional()
    .meta({
      description:
        "Token contract on mainnet and testnet; another network's USDC is refused (Base's on testnet, Base Sepolia's on mainnet)",
      unset: `Circle's USDC of the network: \`${BASE.usdc}\` on Base, \`${BASE_SEPOLIA.usdc}\` on Base Sepolia`,
    }),
  PLATFORM_PAYOUT_ADDRESS: z
    .string()
    .regex(/^0x[0-9a-fA-F]{40}$/, 'expected a 0x-prefixed 20-byte address')
    .optional()
    .meta({
      description: 'Where buyers pay on mainnet and testnet (`payTo`); required there',
      unset: 'on devnet, the platform wallet derived from `APP_SECRET`',
    }),
  PAYOUT_PRIVATE_KEY: z
    .string()
    .regex(/^0x[0-9a-fA-F]{64}$/, 'expected a 0x-prefixed 32-byte hex private key')
    .optional()
    .meta({
      description:
        'Mainnet and testnet only: private key of `PLATFORM_PAYOUT_ADDRESS`; with it (and `BASE_RPC_URL`) the payout sweep pays creators from that address, which needs ETH for gas',
      unset: 'payout sweeps are skipped',
    }),
  PLATFORM_FEE_BPS: z.coerce.number().int().min(0).max(10_000).default(0).meta({
    description:
      "Platform fee kept from each purchase, in basis points of its price (0–10000), taken from the creator's credit",
  }),
  EXPLORER_TX_URL: url(['http:', 'https:'])
    .refine(
      (value) => value.includes('{tx}'),
      'expected a URL template containing {tx}, for example https://basescan.org/tx/{tx}',
    )
    .optional()
    .meta({
      description:
        'Block-explorer page of a transaction, `{tx}` standing for the hash (an http(s) URL containing `{tx}`); sales and payouts link to it as `transaction_url`',
      unset: `\`${BASE.explorerTxUrl}\` on mainnet, \`${BASE_SEPOLIA.explorerTxUrl}\` on testnet; no links on devnet`,
    }),
  SETTLEMENT_TIMEOUT_MS: positiveInt.max(600_000).default(20_000).meta({
    description:
      "How long a purchase waits for the facilitator's settle before `504 settlement_timeout`, in milliseconds",
  }),
  // Both workers fit in the cut job's 30-minute expiry.
  CUT_WORKER_TIMEOUT_SECONDS: positiveInt.max(900).default(600).meta({
    description:
      "A release cut's zip and its analysis each run in a worker thread stopped after this many seconds (at most 900), so a hostile file cannot hold a core forever",
  }),
  // GitHub-backed listings (Rail A) through a GitHub App; unset means `source: github` is refused.
  GITHUB_APP_ID: positiveInt.optional().meta({
    description: 'The App\'s id (its settings page, "App ID")',
    unset: 'Rail A off: `source: github` is refused with `400 invalid_request`',
  }),
  GITHUB_APP_PRIVATE_KEY: z
    .string()
    .includes('-----BEGIN', { message: 'expected a PEM private key' })
    .optional()
    .meta({ description: "The App's private key as PEM text (`\\n` escapes allowed)" }),
  GITHUB_APP_PRIVATE_KEY_PATH: z
    .string()
    .min(1)
    .optional()
    .meta({ description: 'Or the path of its `.pem` file; not both' }),
  GITHUB_WEBHOOK_SECRET: z.string().min(16, 'expected at least 16 characters').optional().meta({
    description:
      "The App's webhook secret, at least 16 characters: deliveries are verified with it (`X-Hub-Signature-256`)",
  }),
  GITHUB_API_URL: url(['https:', 'http:'])
    .default('https://api.github.com')
    .meta({ description: 'REST API base; `https://<host>/api/v3` for GitHub Enterprise Server' }),
  GITHUB_GIT_ALLOW_HTTP: bool.default(false).meta({
    description: 'Lets git fetch over plain `http://`: a local stand-in in tests, never a real GitHub',
  }),
  // Hosted repositories and blobs.
  SSH_HOST: z
    .string()
    .regex(/^[A-Za-z0-9.-]+$|^\[[0-9a-fA-F:]+\]$/, 'expected a host name')
    .optional()
    .meta({ description: 'Host name written in hosted-repository remotes', unset: 'the host of `BASE_URL`' }),
  SSH_LISTEN_HOST: z
    .string()
    .min(1)
    .optional()
    .meta({ description: 'Interface the SSH server listens on', unset: '`HOST`' }),
  SSH_HANDSHAKE_TIMEOUT_SECONDS: positiveInt.max(600).default(10).meta({
    description:
      "An SSH connection must authenticate within this many seconds of connecting, however it trickles bytes (like OpenSSH's `LoginGraceTime`; raise it if keys need a touch)",
  }),
  SSH_IDLE_TIMEOUT_SECONDS: positiveInt.max(86_400).default(300).meta({
    description:
      'An authenticated SSH connection with no bytes either way for this many seconds is closed; a push or clone that keeps moving data is never cut',
  }),
  SSH_MAX_CONNECTIONS: positiveInt
    .max(100_000)
    .default(256)
    .meta({ description: 'Open SSH connections in all; more are closed at once' }),
  SSH_MAX_CONNECTIONS_PER_ADDRESS: positiveInt.max(100_000).default(10).meta({
    description:
      "Open SSH connections per client address (an IPv6 client's /64; `TRUST_PROXY` does not apply); more are closed at once",
  }),
  SSH_MAX_CONNECTIONS_PER_BLOCK: positiveInt.max(100_000).default(32).meta({
    description: 'Open SSH connections per address block (an IPv4 /24, an IPv6 /48); more are closed at once',
  }),
  SSH_MAX_UNAUTHENTICATED_CONNECTIONS: positiveInt.max(100_000).default(128).meta({
    description:
      'SSH connections still logging in, below `SSH_MAX_CONNECTIONS`: the rest is kept for deploy keys that have logged in ([OPERATIONS.md](OPERATIONS.md), "Connection limits")',
  }),
  HTTP_HEADERS_TIMEOUT_SECONDS: positiveInt.max(3600).default(10).meta({
    description:
      "Seconds for a request's headers to arrive; then `400 invalid_request` and the connection closes (a connection that sent nothing is closed without an answer)",
  }),
  HTTP_REQUEST_TIMEOUT_SECONDS: positiveInt.max(3600).default(30).meta({
    description: 'Seconds for a whole request with its body to arrive (at least the headers timeout)',
  }),
  HTTP_KEEP_ALIVE_TIMEOUT_SECONDS: positiveInt.max(3600).default(5).meta({
    description:
      "Seconds an idle kept-alive connection waits for its next request; behind a load balancer, set it above the balancer's idle timeout",
  }),
  // Release limits (docs/RELEASES.md): a push or sync past one is refused before anything is cut.
  RELEASE_TAGS_PER_PUSH: positiveInt
    .max(1000)
    .default(10)
    .meta({ description: 'New `vX.Y.Z` tags one push may add; a push with more is refused whole' }),
  RELEASES_PER_LISTING_PER_DAY: positiveInt
    .max(10_000)
    .default(20)
    .meta({ description: 'Releases one listing may cut per UTC day, pushed or synced (`429` on sync)' }),
  CREATOR_STORAGE_BYTES: positiveInt.default(5 * 1024 * 1024 * 1024).meta({
    description:
      'Bytes of release zips one creator may store (5 GiB by default), each distinct zip counted once (`413`)',
  }),
  TREE_MAX_DEPTH: positiveInt
    .max(4096)
    .default(64)
    .meta({ description: "Directories above a file, at most, in a release's tree (`413`)" }),
  // Advisory data (docs/SCANNING.md).
  OSV_URL: url(['http:', 'https:']).default('https://osv-vulnerabilities.storage.googleapis.com').meta({
    description: 'Mirror of the OSV exports (`<OSV_URL>/<ecosystem>/all.zip`) the advisory sync reads',
  }),
  OSV_SYNC: bool.optional().meta({
    description:
      'Hourly advisory sync from `OSV_URL` ([OPERATIONS.md](OPERATIONS.md), "Advisory data"); `repo402 advisories sync` runs it by hand either way',
    unset: '`true` on mainnet and testnet, `false` on devnet',
  }),
  S3_BUCKET: z.string().min(1).optional().meta({
    description: 'Store release zips and SBOMs in this S3 bucket',
    unset: 'blobs in `$DATA_DIR/blobs`',
  }),
  S3_REGION: z.string().min(1).default('us-east-1').meta({ description: "The bucket's region" }),
  S3_ENDPOINT: url(['http:', 'https:'])
    .optional()
    .meta({ description: 'Endpoint of an S3-compatible store (MinIO, R2, …)', unset: 'AWS' }),
  S3_PUBLIC_ENDPOINT: url(['http:', 'https:']).optional().meta({
    description:
      "Endpoint that buyers' download URLs (presigned, 5 minutes) name, when the store is reached at another address from the servers (`S3_ENDPOINT` on an internal network); signed for that host, so the store must answer there under the same bucket and region",
    unset: '`S3_ENDPOINT` (or AWS)',
  }),
  S3_ACCESS_KEY_ID: z
    .string()
    .min(1)
    .optional()
    .meta({ description: 'Access key id for the bucket', unset: "the SDK's default credential chain" }),
  S3_SECRET_ACCESS_KEY: z
    .string()
    .min(1)
    .optional()
    .meta({ description: 'Its secret access key', unset: "the SDK's default credential chain" }),
  S3_FORCE_PATH_STYLE: bool
    .default(false)
    .meta({ description: 'Path-style bucket addressing (most S3-compatible stores)' }),
  S3_PREFIX: z
    .string()
    .regex(
      /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/,
      'expected a key prefix without leading or trailing slashes',
    )
    .optional()
    .meta({ description: 'Key prefix inside the bucket, without slashes at either end', unset: 'none' }),
});

export interface RateLimitRule {
  max: number;
  windowSeconds: number;
}

/** Route classes with their own fixed-window budget; `registration` is SPEC.md's 5 per hour per IP. */
export type RateLimitClass = 'public' | 'auth' | 'creator' | 'mcp' | 'registration' | 'reports';

export interface Config {
  port: number;
  host: string;
  sshPort: number;
  dataDir: string;
  /** Without a trailing slash. */
  baseUrl: string;
  databaseUrl?: string;
  redisUrl?: string;
  logLevel: string;
  paused: boolean;
  trustProxy: boolean | string;
  /** Where this process's metrics and readiness are served (`METRICS_*`). */
  metrics: MetricsConfig;
  /** Hex; when absent the runtime keeps a generated one in the data directory. */
  appSecret?: string;
  /**
   * Hex seed of the Ed25519 key that signs release attestations; when absent the key is kept in
   * DATA_DIR/attestation-key. Every process that cuts releases must use the same one.
   */
  attestationKey?: string;
  shutdownTimeoutMs: number;
  /** How long a cut's zip or analysis worker may run before it is stopped. */
  cutWorkerTimeoutMs: number;
  /** Whether `serve` also runs the background job workers. */
  workers: boolean;
  /**
   * Where the hosted repositories live when not in this process (a stateless API process or a
   * worker): the git host's operations URL. Unset, they are under DATA_DIR/repos here.
   */
  gitHostUrl?: string;
  rateLimits: Record<RateLimitClass, RateLimitRule>;
  mcp: { streamSeconds: number; streamsPerIp: number };
  /** Base JSON-RPC endpoint for smart-wallet signatures; without it only plain wallets verify. */
  baseRpcUrl?: string;
  compliance: ComplianceConfig;
  /** Outgoing mail (outbox); without `smtpUrl` messages are logged and kept in the database. */
  mail: { smtpUrl?: string; from: string };
  /** Signed webhooks: the retry schedule, the receiver's time, and whether private addresses are allowed (development). */
  webhooks: { retryDelaysSeconds: number[]; timeoutMs: number; allowPrivateAddresses: boolean };
  payments: PaymentsConfig;
  /** Hosted git over SSH: the host in remotes, the interface to listen on, and connection limits. */
  ssh: SshConfig;
  /** How long a client may take to send a request, and to come back on a kept-alive connection. */
  http: { headersTimeoutMs: number; requestTimeoutMs: number; keepAliveTimeoutMs: number };
  /** What one push, one listing per day and one creator's stored zips may add up to. */
  releases: ReleaseLimits;
  /**
   * Where advisory data comes from: the OSV exports' mirror, and whether the hourly job syncs it
   * (`repo402 advisories sync` does either way).
   */
  advisories: { osvUrl: string; sync: boolean };
  /** S3-compatible blob storage; unset means blobs live under DATA_DIR/blobs. */
  s3?: S3Config;
  /** The GitHub App behind `source: github` listings; unset, such listings are refused. */
  github?: GitHubAppConfig;
}

export interface GitHubAppConfig {
  appId: number;
  /** PEM (PKCS#1 as GitHub hands it out, or PKCS#8); held in memory only. */
  privateKey: string;
  webhookSecret: string;
  /** REST API base URL, without a trailing slash. */
  apiUrl: string;
  /** Whether git may fetch over http:// (tests against a local stand-in). */
  allowHttpGit: boolean;
}

export interface ConnectionCaps {
  /** Open connections in all. */
  total: number;
  /** Open connections per client (`peerKey`: an IPv4 address, an IPv6 /64). */
  perAddress: number;
  /** Open connections per address block (`peerBlock`: an IPv4 /24, an IPv6 /48). */
  perBlock: number;
  /** Connections that have not logged in yet; the rest of `total` is kept for those that have. */
  unauthenticated: number;
}

export interface SshConfig {
  publicHost: string;
  listenHost: string;
  handshakeTimeoutMs: number;
  idleTimeoutMs: number;
  connectionCaps: ConnectionCaps;
}

export interface ReleaseLimits {
  tagsPerPush: number;
  perListingPerDay: number;
  creatorStorageBytes: number;
  treeMaxDepth: number;
}

export interface MetricsConfig {
  /** Bearer token for `/metrics`: serves it on the public listener, required on the second one. */
  token?: string;
  /** The second listener (`/metrics`, `/ready`); unset, there is none. */
  port?: number;
  host: string;
}

export type PaymentsMode = 'devnet' | 'testnet' | 'mainnet';

export interface PaymentsConfig {
  /** `devnet` runs its chain in-process; `testnet` and `mainnet` reach one over HTTP. */
  mode: PaymentsMode;
  /** Base for devnet (impersonated) and mainnet, Base Sepolia for testnet. */
  network: PaymentNetwork;
  facilitatorUrl?: string;
  /** Coinbase Developer Platform credentials: every facilitator request carries a CDP JWT. */
  facilitatorCdpKey?: { id: string; secret: string };
  usdcContract: `0x${string}`;
  platformPayoutAddress?: `0x${string}`;
  /** Signs payouts on mainnet and testnet; its address is platformPayoutAddress (checked when the rail opens). */
  payoutPrivateKey?: `0x${string}`;
  feeBps: number;
  settlementTimeoutMs: number;
  /** URL template of a transaction's explorer page, `{tx}` standing for the hash; unset, no links. */
  explorerTxUrl?: string;
}

export interface S3Config {
  bucket: string;
  region: string;
  endpoint?: string;
  /** The endpoint presigned download URLs name; unset, `endpoint`. */
  publicEndpoint?: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  forcePathStyle: boolean;
  prefix?: string;
}

export interface ComplianceConfig {
  sanctionsFile?: string;
  /** Upper-case ISO 3166-1 alpha-2 codes. */
  blockedCountries: string[];
  /** Lower-case header name; unset means no jurisdiction check. */
  countryHeader?: string;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Variables whose values (keys, or URLs that may carry a password) never appear in an error message. */
export const SECRET_VARIABLES: ReadonlySet<string> = new Set([
  'APP_SECRET',
  'ATTESTATION_KEY',
  'PAYOUT_PRIVATE_KEY',
  'S3_SECRET_ACCESS_KEY',
  'DATABASE_URL',
  'REDIS_URL',
  'SMTP_URL',
  'GITHUB_APP_PRIVATE_KEY',
  'GITHUB_WEBHOOK_SECRET',
  'CDP_API_KEY_SECRET',
  'METRICS_TOKEN',
  // RPC providers put their API key in the URL.
  'BASE_RPC_URL',
]);

export const REGISTRATION_RATE_LIMIT: RateLimitRule = { max: 5, windowSeconds: 3600 };
/** POST /api/reports, per address: enough for a person reporting what they found, not for a flood. */
export const REPORT_RATE_LIMIT: RateLimitRule = { max: 10, windowSeconds: 3600 };

/**
 * A secret variable may name a file holding its value instead (`APP_SECRET_FILE=/run/secrets/app`),
 * as container platforms mount secrets: the file's text, without one trailing newline. Setting
 * both forms is refused, as is a file that cannot be read; the message names the variable, never
 * the value.
 */
function secretsFromFiles(env: NodeJS.ProcessEnv): Record<string, string> {
  const read: Record<string, string> = {};
  const problems: string[] = [];
  for (const name of SECRET_VARIABLES) {
    const file = env[`${name}_FILE`];
    if (!file) continue;
    if (env[name]) {
      problems.push(`${name}_FILE: ${name} is set as well; set one of them`);
      continue;
    }
    try {
      read[name] = readFileSync(file, 'utf8').replace(/\r?\n$/, '');
    } catch (error) {
      problems.push(
        `${name}_FILE: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`,
      );
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return read;
}

export function loadConfig(given: NodeJS.ProcessEnv = process.env): Config {
  const env = { ...given, ...secretsFromFiles(given) };
  // An empty variable means "not set", as in most shells' `VAR= cmd`.
  const present = Object.fromEntries(
    Object.keys(EnvSchema.shape)
      .filter((name) => env[name] !== undefined && env[name] !== '')
      .map((name) => [name, env[name]]),
  );
  const parsed = EnvSchema.safeParse(present);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => {
        const name = String(issue.path[0]);
        const shown = SECRET_VARIABLES.has(name) ? '(value hidden)' : JSON.stringify(env[name]);
        return `${name}=${shown}: ${issue.message}`;
      }),
    );
  }
  const e = parsed.data;
  const network = e.PAYMENTS_MODE === 'testnet' ? BASE_SEPOLIA : BASE;
  // The facilitator a testnet rehearsal starts with: x402's public one (no key needed).
  const facilitatorUrl =
    e.FACILITATOR_URL ?? (e.PAYMENTS_MODE === 'testnet' ? TESTNET_FACILITATOR_URL : undefined);
  if (e.PAYMENTS_MODE !== 'devnet') {
    // Without a chain reader a payment whose settle answer was lost could only be guessed at;
    // the chain is the one witness of whether the buyer's transfer happened (docs/PAYMENTS.md).
    const missing = (['FACILITATOR_URL', 'PLATFORM_PAYOUT_ADDRESS', 'BASE_RPC_URL'] as const).filter(
      (name) => !(name === 'FACILITATOR_URL' ? facilitatorUrl : e[name]),
    );
    if (missing.length > 0)
      throw new ConfigError(missing.map((name) => `${name}: required when PAYMENTS_MODE=${e.PAYMENTS_MODE}`));
    assertUsdcOf(network, e.USDC_CONTRACT);
  } else if (e.PAYOUT_PRIVATE_KEY) {
    // On devnet the platform wallet is derived from APP_SECRET; a key given here would be ignored.
    throw new ConfigError(['PAYOUT_PRIVATE_KEY: only used when PAYMENTS_MODE=mainnet or testnet']);
  }
  if (Boolean(e.CDP_API_KEY_ID) !== Boolean(e.CDP_API_KEY_SECRET)) {
    throw new ConfigError([
      `${e.CDP_API_KEY_ID ? 'CDP_API_KEY_SECRET' : 'CDP_API_KEY_ID'}: CDP_API_KEY_ID and CDP_API_KEY_SECRET are set together or not at all`,
    ]);
  }
  if (e.CDP_API_KEY_ID && !facilitatorUrl) {
    throw new ConfigError(['CDP_API_KEY_ID: authenticates requests to FACILITATOR_URL, which is not set']);
  }
  const github = githubAppConfig(e);
  if (e.GIT_HOST_URL) {
    // A process without repositories shares everything else: one database, one blob store, one
    // secret (the git host's token and every signed token derive from it).
    const missing = (['DATABASE_URL', 'S3_BUCKET', 'APP_SECRET'] as const).filter((name) => !e[name]);
    if (missing.length > 0)
      throw new ConfigError(
        missing.map((name) => `${name}: required with GIT_HOST_URL (processes without local state share it)`),
      );
    // Each devnet process would run a chain of its own on one shared journal.
    if (e.PAYMENTS_MODE === 'devnet') {
      throw new ConfigError([
        'PAYMENTS_MODE: processes sharing a git host share one chain: Base Sepolia (testnet), Base (mainnet), or `repo402 devnet serve` with PAYMENTS_MODE=mainnet, its FACILITATOR_URL and BASE_RPC_URL (docs/OPERATIONS.md)',
      ]);
    }
  }
  if (e.SSH_MAX_UNAUTHENTICATED_CONNECTIONS >= e.SSH_MAX_CONNECTIONS) {
    throw new ConfigError([
      'SSH_MAX_UNAUTHENTICATED_CONNECTIONS: must be less than SSH_MAX_CONNECTIONS (the rest is kept for connections that have logged in)',
    ]);
  }
  if (e.METRICS_PORT !== undefined && e.METRICS_PORT !== 0 && [e.PORT, e.SSH_PORT].includes(e.METRICS_PORT)) {
    throw new ConfigError([
      `METRICS_PORT: ${e.METRICS_PORT} is taken by ${e.METRICS_PORT === e.PORT ? 'PORT' : 'SSH_PORT'}; the metrics listener needs a port of its own`,
    ]);
  }
  if (e.HTTP_HEADERS_TIMEOUT_SECONDS > e.HTTP_REQUEST_TIMEOUT_SECONDS) {
    throw new ConfigError([
      'HTTP_HEADERS_TIMEOUT_SECONDS: must not exceed HTTP_REQUEST_TIMEOUT_SECONDS (the headers are part of the request)',
    ]);
  }
  return {
    port: e.PORT,
    host: e.HOST,
    sshPort: e.SSH_PORT,
    dataDir: path.resolve(e.DATA_DIR),
    baseUrl: (e.BASE_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, ''),
    databaseUrl: e.DATABASE_URL,
    redisUrl: e.REDIS_URL,
    logLevel: e.LOG_LEVEL,
    paused: e.PAUSED,
    trustProxy: e.TRUST_PROXY,
    metrics: { token: e.METRICS_TOKEN, port: e.METRICS_PORT, host: e.METRICS_HOST },
    appSecret: e.APP_SECRET,
    attestationKey: e.ATTESTATION_KEY?.toLowerCase(),
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    cutWorkerTimeoutMs: e.CUT_WORKER_TIMEOUT_SECONDS * 1000,
    workers: e.WORKERS,
    gitHostUrl: e.GIT_HOST_URL?.replace(/\/+$/, ''),
    rateLimits: {
      public: e.RATE_LIMIT_PUBLIC,
      auth: e.RATE_LIMIT_AUTH,
      creator: e.RATE_LIMIT_CREATOR,
      mcp: e.RATE_LIMIT_MCP,
      registration: REGISTRATION_RATE_LIMIT,
      reports: REPORT_RATE_LIMIT,
    },
    mcp: { streamSeconds: e.MCP_STREAM_SECONDS, streamsPerIp: e.MCP_STREAMS_PER_IP },
    baseRpcUrl: e.BASE_RPC_URL,
    compliance: {
      sanctionsFile: e.SANCTIONS_FILE ? path.resolve(e.SANCTIONS_FILE) : undefined,
      blockedCountries: (e.BLOCKED_COUNTRIES ?? '')
        .split(',')
        .map((code) => code.trim().toUpperCase())
        .filter(Boolean),
      countryHeader: e.COUNTRY_HEADER?.toLowerCase(),
    },
    mail: {
      smtpUrl: e.SMTP_URL,
      from: e.MAIL_FROM ?? `repo402 <no-reply@${new URL(e.BASE_URL ?? 'http://localhost').hostname}>`,
    },
    webhooks: {
      retryDelaysSeconds: e.WEBHOOK_RETRY_DELAYS_SECONDS.split(',').map(Number),
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
      allowPrivateAddresses: e.WEBHOOK_ALLOW_PRIVATE_ADDRESSES,
    },
    payments: {
      mode: e.PAYMENTS_MODE,
      network,
      facilitatorUrl,
      facilitatorCdpKey:
        e.CDP_API_KEY_ID && e.CDP_API_KEY_SECRET
          ? { id: e.CDP_API_KEY_ID, secret: e.CDP_API_KEY_SECRET }
          : undefined,
      usdcContract: (e.USDC_CONTRACT ?? network.usdc) as `0x${string}`,
      platformPayoutAddress: e.PLATFORM_PAYOUT_ADDRESS as `0x${string}` | undefined,
      payoutPrivateKey: e.PAYOUT_PRIVATE_KEY as `0x${string}` | undefined,
      feeBps: e.PLATFORM_FEE_BPS,
      settlementTimeoutMs: e.SETTLEMENT_TIMEOUT_MS,
      explorerTxUrl: e.EXPLORER_TX_URL ?? (e.PAYMENTS_MODE === 'devnet' ? undefined : network.explorerTxUrl),
    },
    ssh: {
      publicHost: e.SSH_HOST ?? new URL(e.BASE_URL ?? 'http://localhost').hostname,
      listenHost: e.SSH_LISTEN_HOST ?? e.HOST,
      handshakeTimeoutMs: e.SSH_HANDSHAKE_TIMEOUT_SECONDS * 1000,
      idleTimeoutMs: e.SSH_IDLE_TIMEOUT_SECONDS * 1000,
      connectionCaps: {
        total: e.SSH_MAX_CONNECTIONS,
        perAddress: e.SSH_MAX_CONNECTIONS_PER_ADDRESS,
        perBlock: e.SSH_MAX_CONNECTIONS_PER_BLOCK,
        unauthenticated: e.SSH_MAX_UNAUTHENTICATED_CONNECTIONS,
      },
    },
    http: {
      headersTimeoutMs: e.HTTP_HEADERS_TIMEOUT_SECONDS * 1000,
      requestTimeoutMs: e.HTTP_REQUEST_TIMEOUT_SECONDS * 1000,
      keepAliveTimeoutMs: e.HTTP_KEEP_ALIVE_TIMEOUT_SECONDS * 1000,
    },
    releases: {
      tagsPerPush: e.RELEASE_TAGS_PER_PUSH,
      perListingPerDay: e.RELEASES_PER_LISTING_PER_DAY,
      creatorStorageBytes: e.CREATOR_STORAGE_BYTES,
      treeMaxDepth: e.TREE_MAX_DEPTH,
    },
    advisories: {
      osvUrl: e.OSV_URL.replace(/\/+$/, ''),
      // A production server keeps its data current; the devnet (and every test) never goes online.
      sync: e.OSV_SYNC ?? e.PAYMENTS_MODE !== 'devnet',
    },
    s3: e.S3_BUCKET
      ? {
          bucket: e.S3_BUCKET,
          region: e.S3_REGION,
          endpoint: e.S3_ENDPOINT,
          publicEndpoint: e.S3_PUBLIC_ENDPOINT,
          accessKeyId: e.S3_ACCESS_KEY_ID,
          secretAccessKey: e.S3_SECRET_ACCESS_KEY,
          forcePathStyle: e.S3_FORCE_PATH_STYLE,
          prefix: e.S3_PREFIX,
        }
      : undefined,
    github,
  };
}

/**
 * Circle's USDC of the other network named as the token is a setting carried from staging to
 * production or back: at that address the chain paid on has no USDC, so the rail could not open
 * (or, with something else deployed there, would sell for a token nobody meant). Refused at start,
 * naming both addresses; any other address is the operator's to choose.
 */
function assertUsdcOf(network: PaymentNetwork, usdcContract: string | undefined): void {
  const other = PAYMENT_NETWORKS.find(
    (candidate) => candidate !== network && candidate.usdc.toLowerCase() === usdcContract?.toLowerCase(),
  );
  if (other) {
    throw new ConfigError([
      `USDC_CONTRACT: ${usdcContract} is ${other.name}'s USDC, but this PAYMENTS_MODE pays on ${network.name} (${network.caip2}), whose USDC is ${network.usdc}; unset it for that one`,
    ]);
  }
}

/** All of the App's id, key and webhook secret, or none of them (Rail A off). */
function githubAppConfig(e: z.infer<typeof EnvSchema>): GitHubAppConfig | undefined {
  const given = {
    GITHUB_APP_ID: e.GITHUB_APP_ID,
    'GITHUB_APP_PRIVATE_KEY or GITHUB_APP_PRIVATE_KEY_PATH':
      e.GITHUB_APP_PRIVATE_KEY ?? e.GITHUB_APP_PRIVATE_KEY_PATH,
    GITHUB_WEBHOOK_SECRET: e.GITHUB_WEBHOOK_SECRET,
  };
  const missing = Object.entries(given).filter(([, value]) => value === undefined);
  if (missing.length === 3) return undefined;
  if (missing.length > 0) {
    throw new ConfigError(missing.map(([name]) => `${name}: required when a GitHub App is configured`));
  }
  if (e.GITHUB_APP_PRIVATE_KEY && e.GITHUB_APP_PRIVATE_KEY_PATH) {
    throw new ConfigError(['GITHUB_APP_PRIVATE_KEY_PATH: give the key or its path, not both']);
  }
  let privateKey = e.GITHUB_APP_PRIVATE_KEY?.replaceAll('\\n', '\n');
  if (!privateKey) {
    try {
      privateKey = readFileSync(path.resolve(e.GITHUB_APP_PRIVATE_KEY_PATH!), 'utf8');
    } catch (error) {
      throw new ConfigError([`GITHUB_APP_PRIVATE_KEY_PATH: cannot read it (${(error as Error).message})`]);
    }
    if (!privateKey.includes('-----BEGIN')) {
      throw new ConfigError(['GITHUB_APP_PRIVATE_KEY_PATH: the file holds no PEM private key']);
    }
  }
  return {
    appId: e.GITHUB_APP_ID!,
    privateKey,
    webhookSecret: e.GITHUB_WEBHOOK_SECRET!,
    apiUrl: e.GITHUB_API_URL.replace(/\/+$/, ''),
    allowHttpGit: e.GITHUB_GIT_ALLOW_HTTP,
  };
}
