import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { HTTPFacilitatorClient } from '@x402/core/http';
import pg from 'pg';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { gitHostToken } from '../../src/git/repositories.js';
import { adminQuery } from './db.js';
import { type FaultyFacilitator, startFaultyFacilitator } from './faulty-facilitator.js';
import { cliEntry, freePort, ROOT } from './process.js';

/**
 * The multi-process topology of docs/OPERATIONS.md ("Scaling out") on one machine, every part a
 * separate OS process: PostgreSQL (the machine's, a database made for the run), a Redis server of
 * the run's own (so stopping it disturbs nothing else on the machine), an S3 API server (s3rver),
 * `repo402 devnet serve` standing in for Base, a faulty facilitator in front of it (in this
 * process), one `repo402 git-host`, one `repo402 worker` and N stateless `repo402 serve` behind a
 * round-robin proxy (in this process). bench/cluster.ts drives it at scale with faults;
 * test/e2e/cluster.test.ts walks one sale through it.
 */

export interface ManagedProcess {
  name: string;
  /** HTTP base URL, when the process serves one. */
  url?: string;
  pid(): number | undefined;
  /** The last megabyte of its stdout and stderr. */
  logs(): string;
  start(): Promise<void>;
  /** `kill -9` (or `signal`); resolves once it has exited. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again after a kill, on the same ports and data. */
  restart(): Promise<void>;
  /** SIGTERM and wait. */
  stop(): Promise<void>;
}

const KEEP_LOG_BYTES = 1024 * 1024;

function managedProcess(
  name: string,
  command: string,
  args: string[],
  env: Record<string, string>,
  /** Given what the process printed since this start. */
  ready: (printed: string) => Promise<boolean>,
  url?: string,
): ManagedProcess {
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let output = '';
  // What this start printed, until it is ready (its readiness may be a line it prints).
  let sinceStart = '';
  const append = (chunk: Buffer) => {
    output += chunk.toString('utf8');
    if (output.length > 2 * KEEP_LOG_BYTES) output = output.slice(-KEEP_LOG_BYTES);
    if (sinceStart.length < KEEP_LOG_BYTES) sinceStart += chunk.toString('utf8');
  };
  const start = async () => {
    output += `\n--- ${name} starting ---\n`;
    sinceStart = '';
    const started = spawn(command, args, {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = started;
    exited = new Promise((resolve) => started.once('exit', () => resolve()));
    started.stdout?.on('data', append);
    started.stderr?.on('data', append);
    const deadline = Date.now() + 120_000;
    for (;;) {
      if (started.exitCode !== null || started.signalCode !== null) {
        throw new Error(`${name} exited while starting:\n${output.slice(-4000)}`);
      }
      if (await ready(sinceStart).catch(() => false)) return;
      if (Date.now() > deadline) {
        started.kill('SIGKILL');
        throw new Error(`${name} did not become ready:\n${output.slice(-4000)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  const kill = async (signal: NodeJS.Signals = 'SIGKILL') => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  return {
    name,
    url,
    pid: () => child?.pid,
    logs: () => output,
    start,
    kill,
    restart: async () => {
      await kill('SIGKILL');
      await start();
    },
    stop: () => kill('SIGTERM'),
  };
}

async function answersHttp(url: string, init?: RequestInit): Promise<boolean> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(2000) });
  await res.arrayBuffer();
  return res.ok;
}

async function answersRedis(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.setTimeout(1000, () => {
      socket.destroy();
      resolve(false);
    });
    socket.on('error', () => resolve(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (data) => {
      socket.destroy();
      resolve(data.toString().startsWith('+PONG'));
    });
  });
}

async function acceptsTcp(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.on('error', () => resolve(false));
    socket.on('connect', () => {
      socket.destroy();
      resolve(true);
    });
  });
}

/** A Redis server of the caller's own (the machine's binary, nothing kept on disk), to stop and start at will. */
function privateRedis(port: number): ManagedProcess {
  return managedProcess(
    'redis',
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {},
    () => answersRedis(port),
    `redis://127.0.0.1:${port}`,
  );
}

export async function startPrivateRedis(): Promise<ManagedProcess> {
  const redis = privateRedis(await freePort());
  await redis.start();
  return redis;
}

/** A round-robin HTTP proxy; an upstream that refuses the connection is skipped for the next. */
export interface RoundRobinProxy {
  url: string;
  /** Requests answered 502 because their upstream failed after the request was sent. */
  failed: number;
  close(): Promise<void>;
}

export async function startRoundRobinProxy(upstreams: () => string[]): Promise<RoundRobinProxy> {
  let next = 0;
  const state = { failed: 0 };
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const server = http.createServer((request, response) => {
    const body: Buffer[] = [];
    request.on('data', (chunk: Buffer) => body.push(chunk));
    request.on('end', () => {
      const targets = upstreams();
      const forward = (attempt: number) => {
        const target = new URL(targets[next++ % targets.length]!);
        const upstream = http.request(
          {
            agent,
            host: target.hostname,
            port: target.port,
            method: request.method,
            path: request.url,
            headers: { ...request.headers, host: target.host },
          },
          (answer) => {
            response.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(response);
            answer.on('error', () => response.destroy());
          },
        );
        upstream.on('error', (error: NodeJS.ErrnoException) => {
          // Nothing reached a process that refused the connection: the next one may take it.
          if (error.code === 'ECONNREFUSED' && attempt < targets.length) return forward(attempt + 1);
          state.failed += 1;
          if (!response.headersSent) {
            response.writeHead(502, { 'content-type': 'application/json' });
            response.end(JSON.stringify({ error: `upstream failed: ${error.code ?? error.message}` }));
          } else response.destroy();
        });
        upstream.end(Buffer.concat(body));
      };
      forward(1);
    });
  });
  server.keepAliveTimeout = 4000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        agent.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}

export interface ClusterOptions {
  /** The machine's PostgreSQL admin URL; the cluster makes (and drops) two databases there. */
  postgresAdminUrl: string;
  apis: number;
  /** Run the compiled dist/cli.js (benchmarks) instead of the sources through tsx (tests). */
  built: boolean;
  /** More environment for every repo402 process of the tier (rate limits, timeouts, log level). */
  env?: Record<string, string>;
}

export interface Cluster {
  /** The proxy in front of the API processes: BASE_URL of the tier. */
  url: string;
  apis: ManagedProcess[];
  gitHost: ManagedProcess;
  worker: ManagedProcess;
  devnet: ManagedProcess;
  s3: ManagedProcess;
  redis: ManagedProcess;
  facilitator: FaultyFacilitator;
  proxy: RoundRobinProxy;
  /** The tier's database, and the devnet chain's JSON-RPC URL. */
  databaseUrl: string;
  rpcUrl: string;
  /** Where each process keeps its DATA_DIR: `<root>/<process name>`. */
  root: string;
  /** The environment every repo402 process of the tier shares (CLI commands use it too). */
  env: Record<string, string>;
  /** The devnet's environment: `repo402 devnet fund` with it mints test USDC. */
  devnetEnv: Record<string, string>;
  stop(): Promise<void>;
}

export const CLUSTER_BUCKET = 'artifacts';
/** s3rver's fixed credentials. */
const S3RVER_KEY = 'S3RVER';

export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const suffix = randomBytes(4).toString('hex');
  const root = await mkdtemp(path.join(os.tmpdir(), 'repo402-cluster-'));
  const databases = [`repo402_cluster_${suffix}`, `repo402_devnet_${suffix}`];
  const databaseUrl = (name: string) => {
    const url = new URL(options.postgresAdminUrl);
    url.pathname = `/${name}`;
    return url.href;
  };
  for (const name of databases) await adminQuery(options.postgresAdminUrl, `create database ${name}`);
  const started: ManagedProcess[] = [];
  let facilitator: FaultyFacilitator | undefined;
  let proxy: RoundRobinProxy | undefined;
  const stop = async () => {
    await proxy?.close();
    for (const process of [...started].reverse()) await process.stop().catch(() => {});
    await facilitator?.close();
    for (const name of databases) {
      await adminQuery(options.postgresAdminUrl, `drop database if exists ${name} with (force)`).catch(
        () => {},
      );
    }
    await rm(root, { recursive: true, force: true });
  };
  const launch = async (process: ManagedProcess) => {
    await process.start();
    started.push(process);
    return process;
  };
  const entry = options.built ? [path.join(ROOT, 'dist/cli.js')] : cliEntry();
  const repo402 = (
    name: string,
    args: string[],
    env: Record<string, string>,
    ready: (printed: string) => Promise<boolean>,
    url?: string,
  ) => managedProcess(name, process.execPath, [...entry, ...args], env, ready, url);
  const dataDir = async (name: string) => {
    const dir = path.join(root, name);
    await mkdir(dir, { recursive: true });
    return dir;
  };

  try {
    const redis = await launch(privateRedis(await freePort()));
    const s3Port = await freePort();
    const s3Dir = await dataDir('s3');
    const s3 = await launch(
      managedProcess(
        's3',
        process.execPath,
        [
          path.join(ROOT, 'node_modules/s3rver/bin/s3rver.js'),
          ...['-d', s3Dir, '-a', '127.0.0.1', '-p', String(s3Port), '--silent'],
          ...['--configure-bucket', CLUSTER_BUCKET],
        ],
        {},
        () => acceptsTcp(s3Port),
        `http://127.0.0.1:${s3Port}`,
      ),
    );

    const devnetPort = await freePort();
    const devnetEnv = {
      DATA_DIR: await dataDir('devnet'),
      DATABASE_URL: databaseUrl(databases[1]!),
      APP_SECRET: randomBytes(32).toString('hex'),
      PAYMENTS_MODE: 'devnet',
      HOST: '127.0.0.1',
      PORT: String(devnetPort),
      LOG_LEVEL: 'info',
      OSV_SYNC: 'false',
    };
    const rpcUrl = `http://127.0.0.1:${devnetPort}/rpc`;
    const chainId = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] });
    const devnet = await launch(
      repo402('devnet', ['devnet', 'serve'], devnetEnv, () =>
        answersHttp(rpcUrl, {
          method: 'POST',
          body: chainId,
          headers: { 'content-type': 'application/json' },
        }),
      ),
    );
    facilitator = await startFaultyFacilitator(
      new HTTPFacilitatorClient({ url: `http://127.0.0.1:${devnetPort}/facilitator` }),
    );

    const gitHostPort = await freePort();
    const sshPort = await freePort();
    const apiPorts = await Promise.all(Array.from({ length: options.apis }, () => freePort()));
    proxy = await startRoundRobinProxy(() => apiPorts.map((port) => `http://127.0.0.1:${port}`));
    const appSecret = randomBytes(32).toString('hex');
    const env: Record<string, string> = {
      DATABASE_URL: databaseUrl(databases[0]!),
      APP_SECRET: appSecret,
      REDIS_URL: redis.url!,
      S3_BUCKET: CLUSTER_BUCKET,
      S3_ENDPOINT: `http://127.0.0.1:${s3Port}`,
      S3_ACCESS_KEY_ID: S3RVER_KEY,
      S3_SECRET_ACCESS_KEY: S3RVER_KEY,
      S3_FORCE_PATH_STYLE: 'true',
      GIT_HOST_URL: `http://127.0.0.1:${gitHostPort}`,
      PAYMENTS_MODE: 'mainnet',
      FACILITATOR_URL: facilitator.url,
      BASE_RPC_URL: rpcUrl,
      PLATFORM_PAYOUT_ADDRESS: privateKeyToAccount(generatePrivateKey()).address,
      BASE_URL: proxy.url,
      HOST: '127.0.0.1',
      SSH_HOST: '127.0.0.1',
      SSH_PORT: String(sshPort),
      OSV_SYNC: 'false',
      LOG_LEVEL: 'warn',
      ...options.env,
    };
    const token = gitHostToken(Buffer.from(appSecret, 'hex'));
    const gitHost = await launch(
      repo402(
        'git-host',
        ['git-host'],
        { ...env, PORT: String(gitHostPort), DATA_DIR: await dataDir('git-host'), LOG_LEVEL: 'info' },
        () =>
          answersHttp(`${env.GIT_HOST_URL}/ops/ping`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}` },
          }),
        env.GIT_HOST_URL,
      ),
    );
    const worker = repo402(
      'worker',
      ['worker'],
      { ...env, DATA_DIR: await dataDir('worker'), LOG_LEVEL: 'info' },
      async (printed) => printed.includes('repo402 worker is up'),
    );
    await launch(worker);
    const apis: ManagedProcess[] = [];
    for (const [i, port] of apiPorts.entries()) {
      const url = `http://127.0.0.1:${port}`;
      apis.push(
        await launch(
          repo402(
            `api-${i + 1}`,
            ['serve'],
            { ...env, PORT: String(port), WORKERS: 'false', DATA_DIR: await dataDir(`api-${i + 1}`) },
            () => answersHttp(`${url}/api/health`),
            url,
          ),
        ),
      );
    }
    return {
      url: proxy.url,
      apis,
      gitHost,
      worker,
      devnet,
      s3,
      redis,
      facilitator,
      proxy,
      databaseUrl: env.DATABASE_URL!,
      rpcUrl,
      root,
      env,
      devnetEnv,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * Waits until the git host is running a release cut, kills it with SIGKILL there and starts it
 * again; false when no cut became active within `timeoutMs` (nothing was killed).
 */
export async function killGitHostMidCut(cluster: Cluster, timeoutMs = 120_000): Promise<boolean> {
  const db = new pg.Client({ connectionString: cluster.databaseUrl });
  await db.connect();
  try {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const active = await db.query(
        `select 1 from pgboss.job where name = 'releases.cut' and state = 'active'`,
      );
      if (active.rowCount) {
        await cluster.gitHost.restart();
        return true;
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return false;
  } finally {
    await db.end();
  }
}
