/**
 * HTTP load benchmark: a bare Fastify JSON route against repo402's GET /api/health,
 * GET /api/terms and GET /api/label (beside a bare route serving the same manifest), in one run. Prints requests/s and p99 latency for each, with
 * the ratio to the bare route. Usage: npm run bench -- [--duration 10] [--connections 50]
 */
import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const option = (name: string, fallback: number) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};
const duration = option('duration', 10);
const connections = option('connections', 50);

const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'servers.ts')], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
const urls = await new Promise<{ bare: string; repo402: string; label: string }>((resolve, reject) => {
  let buffer = '';
  child.stdout.on('data', (chunk) => {
    buffer += chunk;
    const line = buffer.split('\n')[0];
    if (buffer.includes('\n') && line) resolve(JSON.parse(line));
  });
  child.on('exit', (code) => reject(new Error(`servers exited with ${code}`)));
});

const targets = [
  { name: 'bare Fastify GET /bare', url: `${urls.bare}/bare` },
  { name: 'repo402 GET /api/health', url: `${urls.repo402}/api/health` },
  { name: 'repo402 GET /api/terms', url: `${urls.repo402}/api/terms` },
  { name: 'bare Fastify GET /bare-label (same manifest)', url: `${urls.bare}/bare-label` },
  { name: 'repo402 GET /api/label/{owner}/{slug}', url: `${urls.repo402}${urls.label}` },
];

const results: { name: string; rps: number; p99: number; errors: number; non2xx: number }[] = [];
try {
  for (const target of targets) {
    // A short warm-up lets the JIT and the database settle before the measured run.
    await autocannon({ url: target.url, connections, duration: 2 });
    const run = await autocannon({ url: target.url, connections, duration });
    results.push({
      name: target.name,
      rps: Math.round(run.requests.average),
      p99: run.latency.p99,
      errors: run.errors,
      non2xx: run.non2xx,
    });
  }
} finally {
  child.kill('SIGTERM');
}

const bare = results[0]!.rps;
const table = results
  .map((r) => `| ${r.name} | ${r.rps} | ${r.p99} | ${(r.rps / bare).toFixed(2)} | ${r.errors + r.non2xx} |`)
  .join('\n');
const report = `Machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, Node ${process.version}; ${connections} connections, ${duration} s per route.

| route | requests/s | p99 ms | ratio to bare | errors |
|---|---|---|---|---|
${table}
`;
process.stdout.write(`${report}\n`);
await mkdir(path.join(here, 'results'), { recursive: true });
await writeFile(path.join(here, 'results', 'http-load.md'), report);
