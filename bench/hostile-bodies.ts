/**
 * One address floods every body-taking route with deeply nested JSON while another reads
 * `/api/health` and a listing's label, one request at a time (issue 34; an outside review saw the
 * health check's median at 1.8 s and a label read time out under the same flood). repo402 runs
 * from the build in a process of its own with its rate limits lifted, so every hostile body
 * reaches the body reader, the worst case; the flood and the reader run here, on the same two
 * cores. The flood carries a creator's key, so the key routes read its bodies too. Prints what
 * the reader saw and what the flood got.
 *
 * Usage: npx tsx bench/hostile-bodies.ts [--seconds 20] [--connections 8] [--body-bytes N]
 *   [--db pglite|postgres]
 * Without --body-bytes each body is its route's limit; `--body-bytes 1000000` is the review's flood.
 */
import { parseArgs } from 'node:util';
import { bodyRoutes, floodNestedBodies, timeReads } from '../test/support/hostile-bodies.js';
import { type DatabaseKind, startRepo402 } from './repo402-process.js';
import { seedBenchListings } from './seed-listing.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '20' },
    connections: { type: 'string', default: '8' },
    'body-bytes': { type: 'string' },
    db: { type: 'string', default: 'pglite' },
  },
});
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const bodyBytes = values['body-bytes'] ? Number(values['body-bytes']) : undefined;

const server = await startRepo402(values.db as DatabaseKind);
try {
  const { listing, apiKey } = await seedBenchListings(
    { url: server.url, cliEnv: { DATA_DIR: server.dataDir } },
    { large: false },
  );
  const routes = await bodyRoutes(server.url);
  const readPaths = ['/api/health', `/api/label/${listing.owner}/${listing.slug}`];
  const quiet = await timeReads({
    base: server.url,
    paths: readPaths,
    seconds: 3,
    localAddress: '127.0.0.2',
    intervalMs: 50,
  });
  const [flood, reads] = await Promise.all([
    floodNestedBodies({
      base: server.url,
      routes,
      seconds,
      connections,
      localAddress: '127.0.0.1',
      bodyBytes,
      apiKey,
    }),
    timeReads({ base: server.url, paths: readPaths, seconds, localAddress: '127.0.0.2', intervalMs: 50 }),
  ]);
  const fmt = (ms: number) => `${ms.toFixed(1)} ms`;
  console.log(
    `\nrepo402 (${server.database}), ${routes.length} body routes, ${connections} flood connections, ${
      bodyBytes ? `${bodyBytes}-byte bodies` : "bodies at each route's limit"
    }, ${seconds} s`,
  );
  console.log(
    `flood: ${flood.requests} requests (${(flood.requests / flood.seconds).toFixed(0)}/s), statuses ${JSON.stringify(flood.statuses)}`,
  );
  console.log('| read | quiet p50 | quiet p99 | flood p50 | flood p99 | flood max | answers |');
  console.log('| --- | --- | --- | --- | --- | --- | --- |');
  for (const [i, read] of reads.entries()) {
    const alone = quiet[i]!;
    console.log(
      `| ${read.path.replace(listing.owner, '{owner}').replace(listing.slug, '{slug}')} | ${fmt(alone.p50)} | ${fmt(alone.p99)} | ${fmt(read.p50)} | ${fmt(read.p99)} | ${fmt(read.max)} | ${read.ms.length} |`,
    );
  }
} finally {
  await server.stop();
}
