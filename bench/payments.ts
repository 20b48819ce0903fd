/**
 * Purchases per second, in one run: (1) repo402's full buy path on the devnet chain (in-process
 * facilitator, real settlement transactions); (2) the same path with an instant facilitator (no
 * chain work in verify/settle); (3) the reference @x402/express middleware with the same instant
 * facilitator, selling a JSON route. Each purchase is what a buyer does: GET (402), sign with the
 * official client, GET again with PAYMENT-SIGNATURE, by a fresh wallet. Client and servers share
 * this process and its cores; each scenario is warmed up (50 purchases) before any is measured.
 * Usage: npx tsx bench/payments.ts [--postgres] [--purchases 200] [--rounds 1]
 * [--concurrency 8] [--only devnet|instant|reference] (repeatable: those scenarios alone)
 * [--cpu-prof file.cpuprofile] (a CPU profile of the scenarios alone, without start-up and fixtures;
 * `bench/profile-by-scenario.ts` splits it by scenario, side and package)
 * With --rounds N the scenarios are measured N times, alternated, and each figure is the median of
 * its N (the ratio is the median of the rounds' ratios): one run on a shared machine swings by half.
 * When both the instant and the reference scenarios ran, the run exits 1 if that median is below
 * the bar (`RATIO_BARS`: issue 18's 0.6 on PostgreSQL, 0.45 on PGlite), so a script or CI step that
 * runs it fails instead of printing a figure nobody reads.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';
import { ExactEvmScheme as ExactEvmClientScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { loadConfig } from '../src/config.js';
import { creators, listings, releases } from '../src/db/schema/index.js';
import { startServer } from '../src/server.js';
import { freePort } from '../test/support/process.js';
import { createBenchDatabase } from './postgres.js';
import { instantFacilitator, startReferenceServer } from './x402-reference.js';

const args = process.argv.slice(2);
const option = (name: string, fallback: number) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};
const purchases = option('purchases', 200);
const rounds = option('rounds', 1);
const concurrency = option('concurrency', 8);
const only = args.filter((_, at) => args[at - 1] === '--only');
const profileFile = args[args.indexOf('--cpu-prof') + 1];
/** Purchases each scenario makes unmeasured before any is measured. */
const WARMUP = 50;
/** The least instant / reference ratio (purchases per second, median of the rounds) a run may show. */
const RATIO_BARS = { PostgreSQL: 0.6, PGlite: 0.45 } as const;
/** Set when the run's ratio is under its database's bar: the message the run exits 1 with. */
let belowBar: string | undefined;

function buyer() {
  const account = privateKeyToAccount(generatePrivateKey());
  const client = new x402Client()
    .register('eip155:*', new ExactEvmClientScheme(account))
    .setSpendControls(false);
  return { account, fetch: wrapFetchWithPayment(fetch, client) };
}

interface Result {
  name: string;
  perSecond: number;
  /** This process's CPU time (buyers and servers) per purchase; PostgreSQL's own is not in it. */
  cpuMs: number;
  p50: number;
  p99: number;
  failures: number;
  /** Status (or `error`) of each failed purchase, counted. */
  failedWith: Record<string, number>;
}

async function measure(name: string, url: string, buyers: ReturnType<typeof buyer>[]): Promise<Result> {
  const latencies: number[] = [];
  const cpuBefore = process.cpuUsage();
  let failures = 0;
  const failedWith: Record<string, number> = {};
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < buyers.length) {
        const b = buyers[next++]!;
        const t0 = performance.now();
        const res = await b.fetch(url).catch(() => undefined);
        if (res?.status !== 200) {
          failures += 1;
          const status = String(res?.status ?? 'error');
          failedWith[status] = (failedWith[status] ?? 0) + 1;
        }
        await res?.arrayBuffer();
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  latencies.sort((a, b) => a - b);
  const at = (q: number) =>
    Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!);
  return {
    name,
    perSecond: Math.round((buyers.length / seconds) * 10) / 10,
    cpuMs: Math.round(((cpu.user + cpu.system) / 1000 / buyers.length) * 100) / 100,
    p50: at(0.5),
    p99: at(0.99),
    failures,
    failedWith,
  };
}

const dataDir = await mkdtemp(path.join(os.tmpdir(), 'repo402-bench-pay-'));
// --postgres: run on the machine's PostgreSQL (a database of its own, dropped afterwards) instead of PGlite.
const postgres = args.includes('--postgres') ? await createBenchDatabase() : undefined;
const port = await freePort();
const config = loadConfig({
  DATA_DIR: dataDir,
  PORT: String(port),
  HOST: '127.0.0.1',
  BASE_URL: `http://127.0.0.1:${port}`,
  LOG_LEVEL: 'warn',
  WORKERS: 'false',
  // Every buyer comes from 127.0.0.1: the per-IP budget (600/60 s) would turn later purchases into 429s.
  RATE_LIMIT_PUBLIC: '1000000/60',
  ...(postgres ? { DATABASE_URL: postgres.url } : {}),
});
const server = await startServer(config);
try {
  const base = server.address;
  const { ctx } = server.runtime;
  const rail = await ctx.rail();
  const db = ctx.database.db;
  // Bench fixture: a creator, a published listing and one passing release written directly.
  const [creator] = await db
    .insert(creators)
    .values({
      handle: 'bench-seller',
      payoutAddress: privateKeyToAccount(generatePrivateKey()).address,
      abuseContact: 'abuse@example.com',
      acceptedTermsVersion: 'bench',
      createdAt: new Date(),
    })
    .returning();
  const [listing] = await db
    .insert(listings)
    .values({
      creatorId: creator!.id,
      owner: 'bench-seller',
      slug: 'bench-kit',
      source: 'hosted',
      status: 'published',
      priceMicro: 2_000_000n,
      updatePriceMicro: 500_000n,
      description: 'bench',
      triggerHint: 'bench',
      createdAt: new Date(),
      publishedAt: new Date(),
    })
    .returning();
  await ctx.blobs.putBytes('bench/1.0.0.zip', Buffer.alloc(4096, 1), 'application/zip');
  await db.insert(releases).values({
    listingId: listing!.id,
    version: '1.0.0',
    major: 1,
    minor: 0,
    patch: 0,
    tag: 'v1.0.0',
    commitSha: 'a'.repeat(40),
    artifactKey: 'bench/1.0.0.zip',
    artifactSha256: 'b'.repeat(64),
    sizeBytes: 4096,
    publishedAt: new Date(),
    changelog: 'bench',
    verdict: 'pass',
  });
  const resource = `${base}/api/r/bench-seller/bench-kit`;

  const referenceServer = await startReferenceServer(rail.payTo);

  const devnetFacilitator = rail.facilitator;
  const fundedBuyers = async (count: number) => {
    const funded = Array.from({ length: count }, buyer);
    for (const b of funded) await rail.devnet!.fund(b.account.address, 2_000_000n);
    return funded;
  };
  const freshBuyers = async (count: number) => Array.from({ length: count }, buyer);
  const scenarios = [
    {
      key: 'devnet',
      name: 'repo402, devnet chain (in-process facilitator, real settlement)',
      url: resource,
      facilitator: devnetFacilitator,
      buyers: fundedBuyers,
    },
    {
      key: 'instant',
      name: 'repo402, instant facilitator',
      url: resource,
      facilitator: instantFacilitator,
      buyers: freshBuyers,
    },
    {
      key: 'reference',
      name: '@x402/express reference middleware, instant facilitator',
      url: referenceServer.url,
      facilitator: instantFacilitator,
      buyers: freshBuyers,
    },
  ].filter((scenario) => only.length === 0 || only.includes(scenario.key));

  // Every scenario is first run unmeasured, so each is measured with its code compiled (JIT) and
  // its connections open, whichever runs first.
  for (const scenario of scenarios) {
    rail.facilitator = scenario.facilitator;
    await measure(scenario.name, scenario.url, await scenario.buyers(WARMUP));
  }
  const profiler = args.includes('--cpu-prof') ? new Session() : undefined;
  if (profiler) {
    profiler.connect();
    await profiler.post('Profiler.enable');
    await profiler.post('Profiler.setSamplingInterval', { interval: 250 });
    await profiler.post('Profiler.start');
  }
  const measured: Result[][] = scenarios.map(() => []);
  /** When each measured run began and ended, on the profile's clock (µs), for `bench/profile-by-scenario.ts`. */
  const windows: { scenario: string; purchases: number; from: number; to: number }[] = [];
  const profileClock = () => Number(process.hrtime.bigint() / 1000n);
  for (let round = 0; round < rounds; round += 1) {
    for (const [at, scenario] of scenarios.entries()) {
      rail.facilitator = scenario.facilitator;
      const buyers = await scenario.buyers(purchases);
      const from = profileClock();
      measured[at]!.push(await measure(scenario.name, scenario.url, buyers));
      windows.push({ scenario: scenario.key, purchases, from, to: profileClock() });
    }
  }
  if (profiler) {
    const { profile } = await profiler.post('Profiler.stop');
    await writeFile(profileFile!, JSON.stringify({ ...profile, windows }));
    profiler.disconnect();
  }
  referenceServer.close();

  const database = postgres ? 'PostgreSQL' : 'PGlite';
  console.log(
    `\n${purchases} purchases per scenario, ${concurrency} concurrent buyers, ${database}, ${os.cpus().length} CPUs\n`,
  );
  const median = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    const middle = Math.floor(sorted.length / 2);
    return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  };
  const of = (runs: Result[], field: 'perSecond' | 'cpuMs' | 'p50' | 'p99') =>
    Math.round(median(runs.map((r) => r[field])) * 100) / 100;
  if (rounds > 1) console.log(`${rounds} rounds, alternated; each figure the median of its rounds\n`);
  console.log('| scenario | purchases/s | p50 ms | p99 ms | CPU ms per purchase | failures |');
  console.log('| --- | --- | --- | --- | --- | --- |');
  for (const runs of measured) {
    const failures = runs.reduce((sum, r) => sum + r.failures, 0);
    const why = failures > 0 ? ` (${JSON.stringify(runs.map((r) => r.failedWith))})` : '';
    const name = runs[0]!.name;
    console.log(
      `| ${name} | ${of(runs, 'perSecond')} | ${of(runs, 'p50')} | ${of(runs, 'p99')} | ${of(runs, 'cpuMs')} | ${failures}${why} |`,
    );
  }
  const instant = measured[scenarios.findIndex((scenario) => scenario.key === 'instant')];
  const reference = measured[scenarios.findIndex((scenario) => scenario.key === 'reference')];
  if (instant && reference) {
    const ratios = (field: 'perSecond' | 'cpuMs') =>
      instant.map((r, round) =>
        field === 'perSecond' ? r.perSecond / reference[round]!.perSecond : reference[round]!.cpuMs / r.cpuMs,
      );
    const show = (values: number[]) => values.map((v) => v.toFixed(2)).join(', ');
    const ratio = median(ratios('perSecond'));
    const bar = RATIO_BARS[database];
    console.log(
      `\ninstant / reference, purchases per second: median ${ratio.toFixed(2)} (${show(ratios('perSecond'))}); by CPU per purchase: median ${median(ratios('cpuMs')).toFixed(2)} (${show(ratios('cpuMs'))}); bar on ${database} ${bar}: ${ratio < bar ? 'BELOW' : 'met'}`,
    );
    // Compared unrounded: 0.597 is below 0.6 even though it prints as 0.60.
    if (ratio < bar) {
      belowBar = `${database}: repo402 made ${ratio.toFixed(3)} of the @x402/express reference's purchases per second (median of ${rounds} alternated round${rounds === 1 ? '' : 's'}), below the bar of ${bar}`;
    }
  }
} finally {
  await server.close();
  await rm(dataDir, { recursive: true, force: true });
  await postgres?.drop();
}
if (belowBar) {
  console.error(`\nFAIL: ${belowBar}`);
  process.exit(1);
}
process.exit(0);
