/**
 * The servers under test, in their own process so the load generator does not share their event
 * loop: a bare Fastify JSON route (the ceiling) and repo402 as `repo402 serve` starts it.
 * Prints one JSON line with both URLs, then runs until killed.
 */
import { mkdtemp } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Fastify from 'fastify';
import { loadConfig } from '../src/config.js';
import { startServer } from '../src/server.js';
import { seedBenchListing } from './seed-listing.js';

const bare = Fastify({ logger: false });
bare.get('/bare', async () => ({ status: 'ok' }));

const port = await new Promise<number>((resolve) => {
  const probe = net.createServer().listen(0, '127.0.0.1', () => {
    const { port } = probe.address() as net.AddressInfo;
    probe.close(() => resolve(port));
  });
});
const dataDir = await mkdtemp(path.join(os.tmpdir(), 'repo402-bench-'));
const config = loadConfig({
  ...process.env,
  DATA_DIR: dataDir,
  PORT: String(port),
  HOST: '127.0.0.1',
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
  // The benchmark measures throughput, not the limiter: lift the public budget out of the way.
  RATE_LIMIT_PUBLIC: '100000000/60',
});
const server = await startServer(config);
const label = await seedBenchListing(server.runtime.ctx, new Date());
// The same manifest from a bare Fastify route: what serving it costs without repo402's platform.
const labelResponse = await fetch(`${server.address}/api/label/${label.owner}/${label.slug}`);
if (!labelResponse.ok)
  throw new Error(`the seeded label answered ${labelResponse.status}: ${await labelResponse.text()}`);
const manifest = await labelResponse.json();
bare.get('/bare-label', async () => manifest);
const bareUrl = await bare.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(
  `${JSON.stringify({ bare: bareUrl, repo402: server.address, label: `/api/label/${label.owner}/${label.slug}` })}\n`,
);
