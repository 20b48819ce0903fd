/**
 * The cluster run (issue 19): the topology of docs/OPERATIONS.md as separate OS processes on this
 * machine (test/support/cluster.ts): PostgreSQL, a Redis and an S3 API server (s3rver) of the
 * run's own, `repo402 devnet serve` as Base in mainnet mode, a faulty facilitator in front of it,
 * one git host, one worker, two stateless API processes behind a round-robin proxy. Through it:
 * a creator registers, pushes over SSH, the release is cut and published; then 1,000 buyers, each a
 * fresh wallet, pay with the official x402 client's payloads and download, and re-fetch for free.
 * Faults, each switchable: a facilitator that is slow, fails, answers `pending`, loses its answer
 * or settles after the caller gave up; `kill -9` of the git host mid-cut, of each API process
 * mid-purchase and of the worker; Redis stopped for a while; the S3 server restarted; careless
 * buyers sending several payments at once. The last line is the reconciliation against the chain
 * and the bucket: `lost 0, unpaid grants 0, double 0`, or the run exits 1.
 *
 * Usage: npm run bench:cluster -- [--purchases 1000] [--concurrency 16] [--careless 0.05]
 *   [--faults all|none|facilitator,git-host,api,worker,redis,s3,careless]
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { callControl, controlSocketPath } from '../src/platform/control.js';
import { type Cluster, killGitHostMidCut, startCluster } from '../test/support/cluster.js';
import { type PurchaseOutcome, purchase, refetch } from '../test/support/cluster-buyers.js';
import { balanced, reconcileCluster, reconciliationLine } from '../test/support/cluster-reconcile.js';
import { ROOT } from '../test/support/process.js';
import { publishHostedListing, registerCreator } from '../test/support/seed-over-http.js';
import { POSTGRES_ADMIN_URL } from './postgres.js';
import { benchToolRepo } from './seed-listing.js';

const FAULTS = ['facilitator', 'git-host', 'api', 'worker', 'redis', 's3', 'careless'] as const;
type Fault = (typeof FAULTS)[number];

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 && args[at + 1] !== undefined ? args[at + 1]! : fallback;
};
const purchases = Number(option('purchases', '1000'));
const concurrency = Number(option('concurrency', '16'));
const carelessShare = Number(option('careless', '0.05'));
const faultOption = option('faults', 'all');
const faults = new Set<Fault>(
  faultOption === 'all' ? FAULTS : faultOption === 'none' ? [] : (faultOption.split(',') as Fault[]),
);
for (const fault of faults) if (!FAULTS.includes(fault)) throw new Error(`unknown fault ${fault}`);

const SETTLEMENT_TIMEOUT_MS = 3000;
const PRICE_MICRO = 1_000_000n;

const began = Date.now();
const log = (line: string): void => {
  process.stderr.write(`[${((Date.now() - began) / 1000).toFixed(1).padStart(6)} s] ${line}\n`);
};

function percentile(sorted: number[], q: number): number {
  return sorted.length === 0
    ? 0
    : Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!);
}

async function settlingPayments(cluster: Cluster): Promise<number> {
  const db = new pg.Client({ connectionString: cluster.databaseUrl });
  await db.connect();
  try {
    const { rows } = await db.query<{ n: string }>(
      "select count(*) as n from payments where state = 'settling'",
    );
    return Number(rows[0]!.n);
  } finally {
    await db.end();
  }
}

function tally(values: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}

/** Runs `work` over `items`, `concurrency` at a time, calling `progress` with the count done. */
async function pool<T, R>(
  items: T[],
  work: (item: T, index: number) => Promise<R>,
  progress?: (done: number) => void,
) {
  const results: R[] = new Array(items.length);
  let next = 0;
  let done = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await work(items[index]!, index);
        done += 1;
        progress?.(done);
      }
    }),
  );
  return results;
}

if (!existsSync(path.join(ROOT, 'dist/cli.js')))
  throw new Error('run `npm run build` first (npm run bench:cluster does)');
log(`starting the cluster (faults: ${[...faults].join(', ') || 'none'})`);
const cluster = await startCluster({
  postgresAdminUrl: POSTGRES_ADMIN_URL,
  apis: 2,
  built: true,
  env: {
    RATE_LIMIT_PUBLIC: '1000000/60',
    RATE_LIMIT_AUTH: '1000000/60',
    RATE_LIMIT_CREATOR: '1000000/60',
    SETTLEMENT_TIMEOUT_MS: String(SETTLEMENT_TIMEOUT_MS),
  },
});
let exitCode = 0;
const notes: string[] = [];
try {
  log(
    `up: proxy ${cluster.url}, APIs ${cluster.apis.map((api) => api.url).join(' ')}, git host ${cluster.gitHost.url}`,
  );
  const cliEnv = { ...cluster.env, DATA_DIR: path.join(cluster.root, 'cli') };
  const creator = await registerCreator({ url: cluster.url, cliEnv }, `seller-${randomUUID().slice(0, 6)}`);
  const repo = await benchToolRepo();
  const killedMidCut = faults.has('git-host') ? killGitHostMidCut(cluster) : undefined;
  const cutStarted = Date.now();
  const listing = await publishHostedListing({ url: cluster.url }, creator, {
    slug: 'cluster-tool',
    priceMicro: String(PRICE_MICRO),
    gitDir: repo,
    version: '1.0.0',
  });
  await rm(repo, { recursive: true, force: true });
  await rm(path.dirname(creator.key.file), { recursive: true, force: true });
  if (killedMidCut) {
    const killed = await killedMidCut;
    notes.push(`git host killed mid-cut: ${killed ? 'yes, restarted' : 'no cut seen active'}`);
  }
  log(
    `listing ${listing.owner}/${listing.slug} ${listing.version} cut and published in ${((Date.now() - cutStarted) / 1000).toFixed(1)} s`,
  );

  const buyers = Array.from({ length: purchases }, () => privateKeyToAccount(generatePrivateKey()));
  const devnetSocket = controlSocketPath(cluster.devnetEnv.DATA_DIR!);
  await pool(buyers, (buyer) =>
    callControl(devnetSocket, 'devnet.fund', { address: buyer.address, amountMicro: String(PRICE_MICRO) }),
  );
  log(`funded ${buyers.length} buyers with ${PRICE_MICRO} micro-USDC each`);

  if (faults.has('facilitator')) {
    // One settle in five misbehaves, each way in turn.
    cluster.facilitator.plan = (n) =>
      n % 25 === 5
        ? { mode: 'delay', delayMs: 1000 }
        : n % 25 === 10
          ? { mode: 'fail' }
          : n % 25 === 15
            ? { mode: 'pending' }
            : n % 25 === 20
              ? { mode: 'delay', delayMs: SETTLEMENT_TIMEOUT_MS + 1500 }
              : n % 25 === 0
                ? { mode: 'lost' }
                : { mode: 'ok' };
  }
  const events: Array<{ at: number; name: string; run: () => Promise<void> }> = [];
  const outage = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  if (faults.has('api')) {
    events.push({ at: 0.15, name: 'kill -9 api-1, restart', run: () => cluster.apis[0]!.restart() });
    events.push({ at: 0.75, name: 'kill -9 api-2, restart', run: () => cluster.apis[1]!.restart() });
  }
  if (faults.has('redis')) {
    events.push({
      at: 0.3,
      name: 'Redis stopped for 10 s',
      run: async () => {
        await cluster.redis.kill('SIGKILL');
        await outage(10_000);
        await cluster.redis.start();
      },
    });
  }
  if (faults.has('worker')) {
    events.push({ at: 0.45, name: 'kill -9 worker, restart', run: () => cluster.worker.restart() });
  }
  if (faults.has('s3')) {
    events.push({ at: 0.6, name: 'S3 server restarted', run: () => cluster.s3.restart() });
  }
  events.sort((a, b) => a.at - b.at);
  const running: Promise<void>[] = [];
  const resource = `${cluster.url}/api/r/${listing.owner}/${listing.slug}`;
  const careless = new Set(
    faults.has('careless')
      ? buyers.map((_, i) => i).filter((i) => i % Math.max(1, Math.round(1 / carelessShare)) === 3)
      : [],
  );
  const purchaseStarted = Date.now();
  const outcomes: PurchaseOutcome[] = await pool(
    buyers,
    (buyer, i) => purchase(resource, buyer, { copies: careless.has(i) ? 2 + (i % 2) : 1 }),
    (done) => {
      while (events.length > 0 && done >= events[0]!.at * purchases) {
        const event = events.shift()!;
        log(`fault at ${done} purchases: ${event.name}`);
        running.push(
          event.run().catch((error: unknown) => log(`fault ${event.name} failed: ${String(error)}`)),
        );
        notes.push(`${event.name} (after ${done} purchases)`);
      }
    },
  );
  const purchaseSeconds = (Date.now() - purchaseStarted) / 1000;
  await Promise.all(running);
  const bought = outcomes.filter((o) => o.ok);
  log(`purchases done: ${bought.length}/${purchases} in ${purchaseSeconds.toFixed(1)} s`);

  // Settles left pending or lost are the reconciler's (every minute, rows idle 30 s).
  const waitUntil = Date.now() + 6 * 60_000;
  let settling = await settlingPayments(cluster);
  while (settling > 0 && Date.now() < waitUntil) {
    log(`${settling} payments still settling; waiting for the reconciler`);
    await outage(10_000);
    settling = await settlingPayments(cluster);
  }

  const refetchStarted = Date.now();
  const refetched = await pool(buyers, (buyer, i) =>
    outcomes[i]!.ok ? refetch(resource, listing.version, buyer) : Promise.resolve(false),
  );
  const refetchSeconds = (Date.now() - refetchStarted) / 1000;

  const latencies = bought.map((o) => o.latencyMs).sort((a, b) => a - b);
  const redisLines = cluster.apis.reduce(
    (n, api) => n + (api.logs().match(/Redis unreachable/g)?.length ?? 0),
    0,
  );
  const failures = outcomes.filter((o) => !o.ok).map((o) => o.failure ?? 'unknown');
  const table = [
    '| measure | value |',
    '| --- | --- |',
    `| purchases granted | ${bought.length} of ${purchases} (${careless.size} careless buyers sent 2–3 payments at once) |`,
    `| purchases/s through the proxy | ${(bought.length / purchaseSeconds).toFixed(1)} (concurrency ${concurrency}) |`,
    `| purchase latency p50 / p99 | ${percentile(latencies, 0.5)} ms / ${percentile(latencies, 0.99)} ms |`,
    `| payment requests (incl. retries of the same payment) | ${outcomes.reduce((n, o) => n + o.paymentRequests, 0)} |`,
    `| payments signed anew (the answer that made the buyer sign again) | ${outcomes.reduce((n, o) => n + o.resigned, 0)} ${JSON.stringify(tally(outcomes.flatMap((o) => o.resignedFor)))} |`,
    `| zips downloaded after purchase | ${outcomes.filter((o) => o.downloaded).length} |`,
    `| re-fetches granted and downloaded | ${refetched.filter(Boolean).length} in ${refetchSeconds.toFixed(1)} s |`,
    `| facilitator settles (faulty plan) | ${cluster.facilitator.settles} (${cluster.facilitator.settled} reached the chain) |`,
    `| proxy 502s (upstream died mid-request) | ${cluster.proxy.failed} |`,
    `| API log lines "Redis unreachable" | ${redisLines} |`,
    `| still settling at the end | ${settling} |`,
  ];
  process.stdout.write(`\n${table.join('\n')}\n\nfaults: ${notes.join('; ') || 'none'}\n`);
  if (failures.length > 0)
    process.stdout.write(`purchase failures: ${JSON.stringify(failures.slice(0, 20))}\n`);

  const resignedTrails = outcomes.filter((o) => o.resigned > 0).map((o) => o.trail.join(' → '));
  if (resignedTrails.length > 0) {
    process.stdout.write(
      `what buyers who signed anew went through: ${JSON.stringify(tally(resignedTrails))}\n`,
    );
  }
  const books = await reconcileCluster(cluster);
  for (const problem of books.problems.slice(0, 50)) process.stdout.write(`problem: ${problem}\n`);
  const allServed = bought.length === purchases && refetched.filter(Boolean).length === purchases;
  if (!balanced(books) || !allServed) exitCode = 1;
  process.stdout.write(`total ${((Date.now() - began) / 1000).toFixed(0)} s\n`);
  process.stdout.write(`reconciliation: ${reconciliationLine(books)}\n`);
} catch (error) {
  exitCode = 1;
  log(`run failed: ${(error as Error).stack ?? String(error)}`);
  for (const process_ of [...cluster.apis, cluster.gitHost, cluster.worker, cluster.devnet]) {
    log(`--- ${process_.name} log tail ---\n${process_.logs().slice(-3000)}`);
  }
} finally {
  await cluster.stop();
}
process.exit(exitCode);
