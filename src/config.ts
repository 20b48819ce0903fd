import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';

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

const EnvSchema = z.object({
  PORT: port.default(8402),
  HOST: z.string().min(1).default('localhost'),
  SSH_PORT: port.default(2222),
  DATA_DIR: z.string().min(1).default('./data'),
  BASE_URL: url(['http:', 'https:']).optional(),
  DATABASE_URL: url(['postgres:', 'postgresql:']).optional(),
  REDIS_URL: url(['redis:', 'rediss:']).optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  PAUSED: bool.default(false),
  /**
   * `false`, a comma-separated list of proxy addresses or CIDRs whose X-Forwarded-For entries are
   * believed, or `true` (every entry believed: the client chooses its address unless the proxy
   * replaces the header; warned at start). No hop count: it would believe a client that reaches the
   * port directly (Fastify dropped it for that reason).
   */
  TRUST_PROXY: z
    .string()
    .default('false')
    .transform((value): boolean | string =>
      value === 'true' || value === 'false' ? value === 'true' : value,
    ),
  APP_SECRET: z
    .string()
    .regex(/^[0-9a-fA-F]{64,}$/, 'expected at least 32 bytes as hex (64+ hex characters)')
    .optional(),
  /** The Ed25519 key that signs release attestations: its 32-byte seed as hex. */
  ATTESTATION_KEY: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/, 'expected an Ed25519 private key: its 32-byte seed as 64 hex characters')
    .optional(),
  SHUTDOWN_TIMEOUT_MS: positiveInt.default(10_000),
  WORKERS: bool.default(true),
  /**
   * The git host's operations endpoint (`repo402 git-host`): set, this process keeps no
   * repositories and runs no SSH server; hosted repositories are reached through that process.
   */
  GIT_HOST_URL: url(['http:', 'https:']).optional(),
  RATE_LIMIT_PUBLIC: rateLimit.default({ max: 600, windowSeconds: 60 }),
  RATE_LIMIT_AUTH: rateLimit.default({ max: 60, windowSeconds: 60 }),
  RATE_LIMIT_CREATOR: rateLimit.default({ max: 300, windowSeconds: 60 }),
  RATE_LIMIT_MCP: rateLimit.default({ max: 300, windowSeconds: 60 }),
  /** Lifetime of one quiet MCP notification stream (GET /api/mcp), and how many one IP may hold. */
  MCP_STREAM_SECONDS: positiveInt.max(3600).default(300),
  MCP_STREAMS_PER_IP: positiveInt.max(1000).default(4),
  // Identity and compliance.
  /**
   * JSON-RPC endpoint of Base: required on mainnet (settlements whose answer was lost are decided
   * by reading the chain); enables smart-wallet (EIP-1271, ERC-6492) signature checks.
   */
  BASE_RPC_URL: url(['http:', 'https:']).optional(),
  /** Sanctioned addresses, one per line, `#` comments. */
  SANCTIONS_FILE: z.string().min(1).optional(),
  /** Comma-separated ISO 3166-1 alpha-2 codes refused with 451. */
  BLOCKED_COUNTRIES: z
    .string()
    .regex(/^[A-Za-z]{2}(\s*,\s*[A-Za-z]{2})*$/, 'expected comma-separated two-letter country codes')
    .optional(),
  /** Request header set by a trusted proxy with the client's country (for example CF-IPCountry). */
  COUNTRY_HEADER: z
    .string()
    .regex(/^[A-Za-z0-9-]+$/, 'expected a header name')
    .optional(),
  SMTP_URL: url(['smtp:', 'smtps:']).optional(),
  MAIL_FROM: z.string().min(3).optional(),
  // Payments (docs/PAYMENTS.md).
  /** `devnet` (default): a local chain in-process; `mainnet`: Base through FACILITATOR_URL. */
  PAYMENTS_MODE: z.enum(['devnet', 'mainnet']).default('devnet'),
  /** An x402 facilitator; required on mainnet, optional on devnet (instead of the in-process one). */
  FACILITATOR_URL: url(['http:', 'https:']).optional(),
  USDC_CONTRACT: z
    .string()
    .regex(/^0x[0-9a-fA-F]{40}$/, 'expected a 0x-prefixed 20-byte address')
    .default('0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'),
  /** Where buyers pay (payTo) on mainnet; on devnet the platform wallet derived from APP_SECRET. */
  PLATFORM_PAYOUT_ADDRESS: z
    .string()
    .regex(/^0x[0-9a-fA-F]{40}$/, 'expected a 0x-prefixed 20-byte address')
    .optional(),
  /**
   * Private key of PLATFORM_PAYOUT_ADDRESS on mainnet: with it (and BASE_RPC_URL) the payout sweep
   * pays creators from that address; without it sweeps are skipped.
   */
  PAYOUT_PRIVATE_KEY: z
    .string()
    .regex(/^0x[0-9a-fA-F]{64}$/, 'expected a 0x-prefixed 32-byte hex private key')
    .optional(),
  /** Platform fee in basis points of each purchase, kept from the creator's credit. */
  PLATFORM_FEE_BPS: z.coerce.number().int().min(0).max(10_000).default(0),
  /**
   * A block explorer's page of a transaction: an http(s) URL with `{tx}` where the hash goes.
   * Defaults to Basescan on mainnet; on devnet, unset, no transaction gets a link.
   */
  EXPLORER_TX_URL: url(['http:', 'https:'])
    .refine(
      (value) => value.includes('{tx}'),
      'expected a URL template containing {tx}, for example https://basescan.org/tx/{tx}',
    )
    .optional(),
  /** How long a buy waits for the facilitator's settle before answering 504 settlement_timeout. */
  SETTLEMENT_TIMEOUT_MS: positiveInt.max(600_000).default(20_000),
  /**
   * A cut's zip and its analysis each run in a worker thread stopped after this long (a hostile
   * file must not hold a core forever). Both fit in the cut job's 30-minute expiry.
   */
  CUT_WORKER_TIMEOUT_SECONDS: positiveInt.max(900).default(600),
  // GitHub-backed listings (Rail A) through a GitHub App; unset means `source: github` is refused.
  /** The App's id (its settings page, "App ID"). */
  GITHUB_APP_ID: positiveInt.optional(),
  /** The App's private key as PEM text (`\n` escapes allowed), or GITHUB_APP_PRIVATE_KEY_PATH. */
  GITHUB_APP_PRIVATE_KEY: z
    .string()
    .includes('-----BEGIN', { message: 'expected a PEM private key' })
    .optional(),
  GITHUB_APP_PRIVATE_KEY_PATH: z.string().min(1).optional(),
  /** The App's webhook secret: deliveries are verified with it (X-Hub-Signature-256). */
  GITHUB_WEBHOOK_SECRET: z.string().min(16, 'expected at least 16 characters').optional(),
  /** REST API base: https://api.github.com, or https://<host>/api/v3 for GitHub Enterprise Server. */
  GITHUB_API_URL: url(['https:', 'http:']).default('https://api.github.com'),
  /** Lets git fetch over plain http:// (a local stand-in in tests); never for a real GitHub. */
  GITHUB_GIT_ALLOW_HTTP: bool.default(false),
  // Hosted repositories and blobs.
  /** Host name in hosted-repository remotes; defaults to the host of BASE_URL. */
  SSH_HOST: z
    .string()
    .regex(/^[A-Za-z0-9.-]+$|^\[[0-9a-fA-F:]+\]$/, 'expected a host name')
    .optional(),
  /** Interface the SSH server listens on; defaults to HOST. */
  SSH_LISTEN_HOST: z.string().min(1).optional(),
  /** A connection must authenticate within this time from connecting (like OpenSSH's LoginGraceTime). */
  SSH_HANDSHAKE_TIMEOUT_SECONDS: positiveInt.max(600).default(10),
  /** An authenticated connection with no bytes in either direction for this long is closed. */
  SSH_IDLE_TIMEOUT_SECONDS: positiveInt.max(86_400).default(300),
  /**
   * Open SSH connections: overall, per client address (an IPv6 client's /64), per address block
   * (an IPv4 /24, an IPv6 /48), and not yet logged in (the rest of the total is kept for deploy
   * keys that have).
   */
  SSH_MAX_CONNECTIONS: positiveInt.max(100_000).default(256),
  SSH_MAX_CONNECTIONS_PER_ADDRESS: positiveInt.max(100_000).default(10),
  SSH_MAX_CONNECTIONS_PER_BLOCK: positiveInt.max(100_000).default(32),
  SSH_MAX_UNAUTHENTICATED_CONNECTIONS: positiveInt.max(100_000).default(128),
  /** Time for a request's headers, and for the whole request with its body, to arrive. */
  HTTP_HEADERS_TIMEOUT_SECONDS: positiveInt.max(3600).default(10),
  HTTP_REQUEST_TIMEOUT_SECONDS: positiveInt.max(3600).default(30),
  /** How long an idle kept-alive HTTP connection waits for its next request. */
  HTTP_KEEP_ALIVE_TIMEOUT_SECONDS: positiveInt.max(3600).default(5),
  // Release limits (docs/RELEASES.md): a push or sync past one is refused before anything is cut.
  /** New release tags one push may add; a push with more is refused whole. */
  RELEASE_TAGS_PER_PUSH: positiveInt.max(1000).default(10),
  /** Releases one listing may cut per UTC day, pushed and synced alike. */
  RELEASES_PER_LISTING_PER_DAY: positiveInt.max(10_000).default(20),
  /** Bytes of release zips one creator may have stored, each distinct zip counted once. */
  CREATOR_STORAGE_BYTES: positiveInt.default(5 * 1024 * 1024 * 1024),
  /** Directories above a file, at most, in a release's tree. */
  TREE_MAX_DEPTH: positiveInt.max(4096).default(64),
  // Advisory data (docs/SCANNING.md).
  /** A mirror of the OSV exports, `<OSV_URL>/<ecosystem>/all.zip`: the advisory sync reads it. */
  OSV_URL: url(['http:', 'https:']).default('https://osv-vulnerabilities.storage.googleapis.com'),
  /** The hourly advisory sync; unset, on with PAYMENTS_MODE=mainnet and off on the devnet. */
  OSV_SYNC: bool.optional(),
  S3_BUCKET: z.string().min(1).optional(),
  S3_REGION: z.string().min(1).default('us-east-1'),
  S3_ENDPOINT: url(['http:', 'https:']).optional(),
  S3_ACCESS_KEY_ID: z.string().min(1).optional(),
  S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  S3_FORCE_PATH_STYLE: bool.default(false),
  /** Key prefix inside the bucket, without slashes at either end. */
  S3_PREFIX: z
    .string()
    .regex(
      /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/,
      'expected a key prefix without leading or trailing slashes',
    )
    .optional(),
});

export interface RateLimitRule {
  max: number;
  windowSeconds: number;
}

/** Route classes with their own fixed-window budget; `registration` is SPEC.md's 5 per hour per IP. */
export type RateLimitClass = 'public' | 'auth' | 'creator' | 'mcp' | 'registration';

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

export interface PaymentsConfig {
  mode: 'devnet' | 'mainnet';
  facilitatorUrl?: string;
  usdcContract: `0x${string}`;
  platformPayoutAddress?: `0x${string}`;
  /** Signs payouts on mainnet; its address is platformPayoutAddress (checked when the rail opens). */
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
const SECRET_VARIABLES = new Set([
  'APP_SECRET',
  'ATTESTATION_KEY',
  'PAYOUT_PRIVATE_KEY',
  'S3_SECRET_ACCESS_KEY',
  'DATABASE_URL',
  'REDIS_URL',
  'SMTP_URL',
  'GITHUB_APP_PRIVATE_KEY',
  'GITHUB_WEBHOOK_SECRET',
]);

export const REGISTRATION_RATE_LIMIT: RateLimitRule = { max: 5, windowSeconds: 3600 };

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
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
  if (e.PAYMENTS_MODE === 'mainnet') {
    // Without a chain reader a payment whose settle answer was lost could only be guessed at;
    // the chain is the one witness of whether the buyer's transfer happened (docs/PAYMENTS.md).
    const missing = (['FACILITATOR_URL', 'PLATFORM_PAYOUT_ADDRESS', 'BASE_RPC_URL'] as const).filter(
      (name) => !e[name],
    );
    if (missing.length > 0)
      throw new ConfigError(missing.map((name) => `${name}: required when PAYMENTS_MODE=mainnet`));
  } else if (e.PAYOUT_PRIVATE_KEY) {
    // On devnet the platform wallet is derived from APP_SECRET; a key given here would be ignored.
    throw new ConfigError(['PAYOUT_PRIVATE_KEY: only used when PAYMENTS_MODE=mainnet']);
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
        'PAYMENTS_MODE: processes sharing a git host share one chain: run `repo402 devnet serve` and set PAYMENTS_MODE=mainnet with its FACILITATOR_URL and BASE_RPC_URL (docs/OPERATIONS.md)',
      ]);
    }
  }
  if (e.SSH_MAX_UNAUTHENTICATED_CONNECTIONS >= e.SSH_MAX_CONNECTIONS) {
    throw new ConfigError([
      'SSH_MAX_UNAUTHENTICATED_CONNECTIONS: must be less than SSH_MAX_CONNECTIONS (the rest is kept for connections that have logged in)',
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
    payments: {
      mode: e.PAYMENTS_MODE,
      facilitatorUrl: e.FACILITATOR_URL,
      usdcContract: e.USDC_CONTRACT as `0x${string}`,
      platformPayoutAddress: e.PLATFORM_PAYOUT_ADDRESS as `0x${string}` | undefined,
      payoutPrivateKey: e.PAYOUT_PRIVATE_KEY as `0x${string}` | undefined,
      feeBps: e.PLATFORM_FEE_BPS,
      settlementTimeoutMs: e.SETTLEMENT_TIMEOUT_MS,
      explorerTxUrl:
        e.EXPLORER_TX_URL ?? (e.PAYMENTS_MODE === 'mainnet' ? 'https://basescan.org/tx/{tx}' : undefined),
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
      sync: e.OSV_SYNC ?? e.PAYMENTS_MODE === 'mainnet',
    },
    s3: e.S3_BUCKET
      ? {
          bucket: e.S3_BUCKET,
          region: e.S3_REGION,
          endpoint: e.S3_ENDPOINT,
          accessKeyId: e.S3_ACCESS_KEY_ID,
          secretAccessKey: e.S3_SECRET_ACCESS_KEY,
          forcePathStyle: e.S3_FORCE_PATH_STYLE,
          prefix: e.S3_PREFIX,
        }
      : undefined,
    github,
  };
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
