/**
 * The public routes against the same bytes from a bare Fastify route (`npm run bench`; issue 18).
 * For each database, repo402 starts from the build in a process of its own (bench/repo402-process.ts)
 * and a published listing is seeded through the service's own paths (bench/seed-listing.ts). Each
 * route's answer is captured and served again, status, headers and body, by a bare Fastify app in
 * another process (bench/same-bytes.ts); autocannon, here, drives repo402 and then the bare app,
 * route by route, each after a warm-up. Then the resident size of the repo402 process idle, after
 * 10,000 mixed requests and while a 100 MB zip downloads (bench/memory.ts). Prints one table, writes
 * it to bench/results/, and prints the command that reproduces it.
 *
 * Each route is measured in rounds, repo402 then the bare route in every round, and each side's
 * median round is reported: on a two-core machine one run of a few seconds moves by a tenth from
 * one try to the next, and alternating in rounds spreads that noise over both sides.
 *
 * `--proxy` adds the deployed setups (issue 42): repo402 restarted on the same data with
 * `TRUST_PROXY` naming the proxies in front (a list that includes 127.0.0.1, where autocannon
 * connects from) or `true`, and every request carrying the `X-Forwarded-For` a proxy would add.
 * Rate limits run in every setup (the limiter's hook counts each request by its client address);
 * their budgets are raised out of reach (bench/repo402-process.ts) so no answer is a 429. The
 * proxied setups measure the routes with a target, on the first database of `--db` only: what
 * `TRUST_PROXY` changes is the HTTP layer, which is the same on both.
 *
 * Usage: npm run bench -- [--duration 3] [--rounds 3] [--warmup 2] [--connections 50]
 *   [--db pglite|postgres|both] [--routes label,402,…] [--proxy none,list,true] [--skip-memory]
 */
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { downloadWhileSampling, mixedRequests, type Resident, resident } from './memory.js';
import { type DatabaseKind, startRepo402 } from './repo402-process.js';
import { type BenchRoute, benchRoutes, ROUTE_IDS } from './routes.js';
import { type BareServer, type CapturedResponse, capture, startBareServer } from './same-bytes.js';
import { seedBenchListings } from './seed-listing.js';

/** Issue 18's bar for the public read routes, at 50 connections. */
const TARGET_RATIO = 0.6;
const TARGET_P99_MS = 50;
const MIXED_REQUESTS = 10_000;

/** A deployment's proxies: a private range and the loopback address autocannon connects from. */
const TRUSTED_PROXIES = '10.0.0.0/8,127.0.0.1';
/** The client as the proxy in front reports it (a documentation address, RFC 5737). */
const FORWARDED_FOR = '203.0.113.7';

/** How the load reaches repo402: `none` directly, the others as through a proxy. */
interface ProxySetup {
  id: string;
  /** `TRUST_PROXY` as the table shows it. */
  shown: string;
  env: Record<string, string>;
  /** Added to every request, to repo402 and to the bare route alike. */
  headers: Record<string, string>;
}
const PROXY_SETUPS: ProxySetup[] = [
  { id: 'none', shown: 'unset', env: {}, headers: {} },
  {
    id: 'list',
    shown: `\`${TRUSTED_PROXIES}\``,
    env: { TRUST_PROXY: TRUSTED_PROXIES },
    headers: { 'x-forwarded-for': FORWARDED_FOR },
  },
  {
    id: 'true',
    shown: '`true`',
    env: { TRUST_PROXY: 'true' },
    headers: { 'x-forwarded-for': FORWARDED_FOR },
  },
];

const here = path.dirname(fileURLToPath(import.meta.url));

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '50' },
    db: { type: 'string', default: 'both' },
    routes: { type: 'string' },
    proxy: { type: 'string', default: PROXY_SETUPS.map((setup) => setup.id).join(',') },
    'skip-memory': { type: 'boolean', default: false },
  },
});
function positive(name: string, value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} expects a positive integer, got ${value}`);
  return n;
}
const duration = positive('duration', values.duration);
const warmup = positive('warmup', values.warmup);
const rounds = positive('rounds', values.rounds);
const connections = positive('connections', values.connections);
const databases: DatabaseKind[] =
  values.db === 'both'
    ? ['pglite', 'postgres']
    : values.db === 'pglite' || values.db === 'postgres'
      ? [values.db]
      : [];
if (databases.length === 0) throw new Error(`--db expects pglite, postgres or both, got ${values.db}`);
const routeIds = values.routes?.split(',').map((id) => id.trim());
const unknown = routeIds?.filter((id) => !ROUTE_IDS.includes(id));
if (unknown?.length) throw new Error(`unknown route ${unknown.join(', ')}; known: ${ROUTE_IDS.join(', ')}`);
const memory = !values['skip-memory'];
const proxyIds = values.proxy.split(',').map((id) => id.trim());
const unknownProxy = proxyIds.filter((id) => !PROXY_SETUPS.some((setup) => setup.id === id));
if (unknownProxy.length || proxyIds.length === 0) {
  throw new Error(
    `--proxy expects some of ${PROXY_SETUPS.map((setup) => setup.id).join(', ')}, got ${values.proxy}`,
  );
}
// In the table's order whatever the order asked, so the direct setup (with the memory readings) comes first.
const proxySetups = PROXY_SETUPS.filter((setup) => proxyIds.includes(setup.id));

/** On Ctrl-C the servers still stop, and the PostgreSQL database made for the run is dropped. */
const running = new Set<{ stop(): Promise<void> }>();
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void Promise.allSettled([...running].map((stoppable) => stoppable.stop())).then(() => process.exit(130));
  });
}

const progress = (line: string) => process.stderr.write(`[bench] ${line}\n`);

interface Measured {
  rps: number;
  p99: number;
  /** Transport errors, timeouts and answers with another status than the route's own. */
  errors: number;
}

async function measure(base: string, route: BenchRoute, warm: boolean): Promise<Measured> {
  const options = {
    url: new URL(route.request.path, base).href,
    method: route.request.method,
    headers: route.request.headers,
    body: route.request.body,
    connections,
  };
  // The warm-up lets the JIT, caches and connection pools settle before the first measured run.
  if (warm) await autocannon({ ...options, duration: warmup });
  const run = await autocannon({ ...options, duration });
  const wrong = Object.entries(run.statusCodeStats ?? {})
    .filter(([status]) => Number(status) !== route.status)
    .reduce((sum, [, stats]) => sum + (stats.count ?? 0), 0);
  return {
    rps: Math.round(run.requests.average),
    p99: run.latency.p99,
    errors: run.errors + run.timeouts + wrong,
  };
}

/** The round with the median throughput (its own p99), with the errors of every round. */
function median(measured: Measured[]): Measured {
  const sorted = [...measured].sort((a, b) => a.rps - b.rps);
  const middle = sorted[Math.floor(sorted.length / 2)]!;
  return { ...middle, errors: measured.reduce((sum, m) => sum + m.errors, 0) };
}

interface Row {
  route: BenchRoute;
  database: DatabaseKind;
  setup: ProxySetup;
  repo402: Measured;
  bare: Measured;
}

interface MemoryRow extends Resident {
  database: DatabaseKind;
  moment: string;
}

const startedAt = new Date();
const loadAtStart = os.loadavg();
const rows: Row[] = [];
const memoryRows: MemoryRow[] = [];
const notes: string[] = [];

for (const [index, database] of databases.entries()) {
  const setups = index === 0 ? proxySetups : proxySetups.filter((setup) => setup.id === 'none');
  if (setups.length === 0) {
    notes.push(`${database}: not run (the proxied setups run on the first database of --db only)`);
    continue;
  }
  progress(`${database}: starting repo402`);
  const server = await startRepo402(database);
  running.add(server);
  let bare: BareServer | undefined;
  const remember = async (moment: string, figures?: Resident) =>
    memoryRows.push({ database, moment, ...(figures ?? (await resident(server.pid))) });
  try {
    if (memory) {
      // Start-up work (migrations, job schedules, the devnet chain) settles first.
      await new Promise((resolve) => setTimeout(resolve, 5000));
      await remember('idle after start');
    }
    progress(`${database}: seeding through the API and git over SSH`);
    const { listing, large } = await seedBenchListings(
      { url: server.url, cliEnv: { DATA_DIR: server.dataDir } },
      { large: memory },
    );

    const routes = await benchRoutes(server.url, listing, routeIds);

    if (large) {
      await remember('after seeding (two releases cut, one of 100 MB)');
      progress(`${database}: ${MIXED_REQUESTS} mixed requests`);
      const mixed = await mixedRequests(server.url, routes, MIXED_REQUESTS);
      notes.push(
        `${database}: ${MIXED_REQUESTS} mixed requests answered ${JSON.stringify(mixed.statuses)}, ${mixed.errors} transport errors`,
      );
      await remember(`after ${MIXED_REQUESTS.toLocaleString('en')} mixed requests`);
      progress(`${database}: downloading the 100 MB zip`);
      const download = await downloadWhileSampling(server.url, server.pid, large);
      notes.push(
        `${database}: downloaded ${download.megabytes} MB in ${download.seconds.toFixed(1)} s, sha256 ${download.sha256Matches ? 'matches' : 'DOES NOT MATCH'} the grant`,
      );
      const after = await resident(server.pid);
      await remember('during the 100 MB download (peak of 50 ms samples)', {
        ...after,
        rssMb: download.peakDuringMb,
      });
      await remember('after the download', after);
    }

    for (const setup of setups) {
      // The server starts direct: a proxied setup is the same data served by a restarted process.
      if (setup.id !== 'none') {
        progress(`${database}: restarting repo402 with TRUST_PROXY=${setup.env.TRUST_PROXY}`);
        await server.restart(setup.env);
      }
      const measured = routes
        .filter((route) => setup.id === 'none' || route.target)
        .map((route) => ({
          ...route,
          request: { ...route.request, headers: { ...route.request.headers, ...setup.headers } },
        }));
      // Captured again per setup, so the bare route sends every header this process sent.
      const captured: CapturedResponse[] = [];
      for (const route of measured) {
        const answer = await capture(server.url, route.request);
        if (answer.status !== route.status)
          notes.push(
            `${database}, TRUST_PROXY ${setup.shown}: ${route.label} answered ${answer.status}, expected ${route.status}`,
          );
        captured.push(answer);
      }
      notes.push(
        `${database}, TRUST_PROXY ${setup.shown}: answers served again by the bare route (status, body bytes): ${measured
          .map(
            (route, i) =>
              `${route.id} ${captured[i]!.status} ${Buffer.byteLength(captured[i]!.body, 'base64')}`,
          )
          .join(', ')}`,
      );
      bare = await startBareServer(captured);
      running.add(bare);
      for (const route of measured) {
        progress(`${database}, TRUST_PROXY ${setup.shown}: ${route.label}`);
        const ours: Measured[] = [];
        const theirs: Measured[] = [];
        for (let round = 0; round < rounds; round++) {
          ours.push(await measure(server.url, route, round === 0));
          theirs.push(await measure(bare.url, route, round === 0));
        }
        rows.push({ route, database, setup, repo402: median(ours), bare: median(theirs) });
      }
      running.delete(bare);
      await bare.stop();
      bare = undefined;
      if (memory && setup.id === 'none') await remember('after the throughput runs');
    }
  } finally {
    for (const stoppable of [bare, server]) {
      if (!stoppable) continue;
      running.delete(stoppable);
      await stoppable.stop();
    }
  }
}

const loadAtEnd = os.loadavg();
const load = (l: number[]) => l.map((v) => v.toFixed(2)).join(' / ');
const verdict = (row: Row, ratio: number) => {
  if (!row.route.target) return 'no target';
  const misses = [
    ...(ratio < TARGET_RATIO ? [`ratio < ${TARGET_RATIO}`] : []),
    ...(row.repo402.p99 > TARGET_P99_MS ? [`p99 > ${TARGET_P99_MS} ms`] : []),
  ];
  return misses.length ? `**BELOW: ${misses.join(', ')}**` : 'ok';
};
const table = rows.map((row) => {
  const ratio = row.repo402.rps / row.bare.rps;
  return `| ${row.route.label} | ${row.database} | ${row.setup.shown} | ${row.repo402.rps} | ${row.bare.rps} | ${ratio.toFixed(2)} | ${row.repo402.p99} | ${row.bare.p99} | ${row.repo402.errors} / ${row.bare.errors} | ${verdict(row, ratio)} |`;
});
const memoryTable = memoryRows.map((m) => `| ${m.database} | ${m.moment} | ${m.rssMb} | ${m.hwmMb} |`);
const command = [
  'npm run bench --',
  `--duration ${duration} --rounds ${rounds} --warmup ${warmup} --connections ${connections} --db ${values.db}`,
  ...(routeIds ? [`--routes ${routeIds.join(',')}`] : []),
  `--proxy ${proxySetups.map((setup) => setup.id).join(',')}`,
  ...(memory ? [] : ['--skip-memory']),
].join(' ');
const cpus = os.cpus();
const minutes = ((Date.now() - startedAt.getTime()) / 60_000).toFixed(1);

const report = `# repo402 public routes against the same bytes from bare Fastify

${startedAt.toISOString()}; ${cpus.length} × ${cpus[0]?.model ?? 'CPU'}, ${Math.round(os.totalmem() / 1024 ** 3)} GiB, Node ${process.version}.
Load average (1 / 5 / 15 min): ${load(loadAtStart)} at the start, ${load(loadAtEnd)} at the end; ${minutes} min in all.
${connections} connections; per route ${rounds} rounds of ${duration} s, repo402 then the bare route in each (after a ${warmup} s warm-up of each in the first), each side's median round shown.
Targets (issue 18, public read routes): at least ${TARGET_RATIO} of the bare route, p99 at most ${TARGET_P99_MS} ms.
Rate limits on in every row, budgets out of reach. TRUST_PROXY other than unset: repo402 restarted with it, each request (to both servers) carrying \`X-Forwarded-For: ${FORWARDED_FOR}\`.

| route | database | TRUST_PROXY | repo402 req/s | bare req/s | ratio | repo402 p99 ms | bare p99 ms | errors or other status (repo402 / bare) | target |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
${table.join('\n')}
${
  memory
    ? `
Resident size of the repo402 process (/proc/<pid>/status), MiB:

| database | moment | VmRSS | VmHWM (peak so far) |
| --- | --- | --- | --- |
${memoryTable.join('\n')}
`
    : ''
}${notes.length ? `\n${notes.map((note) => `- ${note}`).join('\n')}\n` : ''}
Reproduce: \`${command}\`
`;
process.stdout.write(`\n${report}`);
await mkdir(path.join(here, 'results'), { recursive: true });
const file = path.join(here, 'results', `http-load-${startedAt.toISOString().replace(/[:.]/g, '-')}.md`);
await writeFile(file, report);
process.stdout.write(`\nWritten to ${path.relative(process.cwd(), file)}\n`);
