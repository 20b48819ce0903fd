import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { commitFile, workRepo } from '../releases/support.js';
import { bodyRoutes, floodNestedBodies, timeReads } from '../support/hostile-bodies.js';
import { type ServerProcess, startServerProcess } from '../support/process.js';
import { publishHostedListing, registerCreator } from '../support/seed-over-http.js';

/** Lifted, so that every hostile body reaches the body reader: the worst case. */
const UNLIMITED = '100000000/60';
const FLOOD_SECONDS = 20;
/** Generous for a loaded two-core machine running the flood, the reader and the server at once. */
const READ_P99_BOUND_MS = 200;

describe('deeply nested bodies flooding every body route from one address', () => {
  let server: ServerProcess | undefined;
  let dataDir: string | undefined;
  afterAll(async () => {
    await server?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('leave /api/health and a label read under 200 ms at p99', async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'repo402-bodies-'));
    server = await startServerProcess({
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PUBLIC: UNLIMITED,
      RATE_LIMIT_MCP: UNLIMITED,
      RATE_LIMIT_AUTH: UNLIMITED,
      RATE_LIMIT_CREATOR: UNLIMITED,
    });
    const target = { url: server.url, cliEnv: { DATA_DIR: dataDir } };
    const creator = await registerCreator(target, 'body-flood');
    const repo = await workRepo();
    await commitFile(repo, 'README.md', '# flood-target\n\nA small tool.\n', 'First release');
    await repo.git('tag', 'v1.0.0');
    const listing = await publishHostedListing(target, creator, {
      slug: 'flood-target',
      priceMicro: '1000000',
      gitDir: repo.dir,
      version: '1.0.0',
    });
    await rm(repo.dir, { recursive: true, force: true });

    const routes = await bodyRoutes(server.url);
    expect(routes.length).toBeGreaterThanOrEqual(10);
    const flood = { base: server.url, routes, seconds: FLOOD_SECONDS, localAddress: '127.0.0.1' };
    const [atLimits, review, reads] = await Promise.all([
      // Each body as large as its route reads, carrying a key so the key routes read them too.
      floodNestedBodies({ ...flood, connections: 4, apiKey: creator.apiKey }),
      // The review's flood: 1 MB of `[` then `]`, no key.
      floodNestedBodies({ ...flood, connections: 4, bodyBytes: 1_000_000 }),
      timeReads({
        base: server.url,
        paths: ['/api/health', `/api/label/${listing.owner}/${listing.slug}`],
        seconds: FLOOD_SECONDS,
        localAddress: '127.0.0.2',
        intervalMs: 50,
      }),
    ]);

    // The flood was real: thousands of bodies, every one refused with a 4xx (a connection reset
    // while a refused 1 MB body was still being written counts as 0).
    expect(atLimits.requests).toBeGreaterThan(1000);
    expect(Object.keys(atLimits.statuses)).toEqual(['400']);
    for (const status of Object.keys(review.statuses)) expect(['0', '400', '401']).toContain(status);
    for (const read of reads) {
      const summary = `${read.path}: ${read.ms.length} reads, p50 ${read.p50.toFixed(1)} ms, p99 ${read.p99.toFixed(1)} ms, max ${read.max.toFixed(1)} ms`;
      expect(read.ms.length, summary).toBeGreaterThan(100);
      expect(new Set(read.statuses), summary).toEqual(new Set([200]));
      expect(read.p99, summary).toBeLessThan(READ_P99_BOUND_MS);
    }
  }, 180_000);
});
