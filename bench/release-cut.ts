/**
 * The full cut of a generated 200 MB / 20,000-file repository: snapshot (git archive zip),
 * analysis + scan (inspectRelease: the streaming file pass in worker threads, then dependencies,
 * advisories, originality on PGlite), and the two side by side as the pipeline runs them. Then
 * the secret scan alone, ours against @secretlint/core, over the same text in the same run.
 *
 * Needs the compiled service (`npm run build`): worker threads load dist/ JavaScript, as in
 * production. Run with `npx tsx bench/release-cut.ts` (not part of `npm test`).
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { lintSource } from '@secretlint/core';
import { creator as recommended } from '@secretlint/secretlint-rule-preset-recommend';

const run = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = (p: string) => pathToFileURL(path.join(root, 'dist', p)).href;
if (!existsSync(path.join(root, 'dist/analysis/inspect.js'))) throw new Error('run `npm run build` first');

const { inspectRelease } = (await import(
  dist('analysis/inspect.js')
)) as typeof import('../src/analysis/inspect.js');
const { listTree, readBlobs } = (await import(
  dist('analysis/git.js')
)) as typeof import('../src/analysis/git.js');
const { createSecretScanner } = (await import(
  dist('scan/secrets.js')
)) as typeof import('../src/scan/secrets.js');
const { lineIndex } = (await import(dist('scan/lines.js'))) as typeof import('../src/scan/lines.js');
const { connectDatabase } = (await import(dist('db/connect.js'))) as typeof import('../src/db/connect.js');
const { migrate } = (await import(dist('db/migrate.js'))) as typeof import('../src/db/migrate.js');

const FILES = 20_000;
const BINARY_FILES = 40;
const BINARY_BYTES = 1024 * 1024;
const TARGET_BYTES = 199 * 1024 * 1024;
const repoDir = path.join(os.tmpdir(), `repo402-bench-${FILES}`);

/** Deterministic code- and prose-like text, so git compresses it as it would real sources. */
function generator(seed: number) {
  let state = seed;
  const next = () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state >>> 8;
  };
  const words = Array.from(
    { length: 4000 },
    (_, i) =>
      `${['get', 'set', 'load', 'parse', 'render', 'token', 'user', 'item', 'cache', 'value'][i % 10]}${(i * 2654435761) % 99991}`,
  );
  return (bytes: number, kind: 'code' | 'doc') => {
    const lines: string[] = [];
    let size = 0;
    while (size < bytes) {
      const n = 4 + (next() % 9);
      const picked = Array.from({ length: n }, () => words[next() % words.length]);
      const line =
        kind === 'code'
          ? `  const ${picked[0]} = ${picked.slice(1).join('(')}${')'.repeat(n - 1)};`
          : picked.join(' ');
      lines.push(line);
      size += line.length + 1;
    }
    return `${lines.join('\n')}\n`;
  };
}

async function generateRepo(): Promise<string> {
  if (existsSync(path.join(repoDir, '.git')))
    return (await run('git', ['-C', repoDir, 'rev-parse', 'HEAD'])).stdout.trim();
  await rm(repoDir, { recursive: true, force: true });
  const text = generator(42);
  const textFiles = FILES - BINARY_FILES;
  const perText = Math.floor((TARGET_BYTES - BINARY_FILES * BINARY_BYTES) / textFiles);
  for (let i = 0; i < textFiles; i++) {
    const dir = path.join(repoDir, `pkg${i % 50}`, `mod${i % 400}`);
    await mkdir(dir, { recursive: true });
    const doc = i % 5 === 0;
    await writeFile(
      path.join(dir, doc ? `note${i}.md` : `file${i}.ts`),
      text(perText - 40, doc ? 'doc' : 'code'),
    );
  }
  await mkdir(path.join(repoDir, 'assets'), { recursive: true });
  for (let i = 0; i < BINARY_FILES; i++) {
    const buffer = Buffer.alloc(BINARY_BYTES);
    let x = i + 1;
    for (let j = 0; j < buffer.length; j += 4) {
      x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
      buffer.writeUInt32LE(x, j);
    }
    buffer[0] = 0;
    await writeFile(path.join(repoDir, 'assets', `blob${i}.bin`), buffer);
  }
  const env = {
    ...process.env,
    GIT_AUTHOR_NAME: 'b',
    GIT_AUTHOR_EMAIL: 'b@b',
    GIT_COMMITTER_NAME: 'b',
    GIT_COMMITTER_EMAIL: 'b@b',
  };
  await run('git', ['-C', repoDir, 'init', '-q', '-b', 'main'], { env });
  await run('git', ['-C', repoDir, 'add', '-A'], { env, maxBuffer: 1 << 26 });
  await run('git', ['-C', repoDir, 'commit', '-q', '-m', 'bench'], { env, maxBuffer: 1 << 26 });
  return (await run('git', ['-C', repoDir, 'rev-parse', 'HEAD'])).stdout.trim();
}

function snapshot(commit: string, out: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      'git',
      ['-C', repoDir, 'archive', '--format=zip', '--prefix=bench-1.0.0/', '-o', out, commit],
      { stdio: 'ignore' },
    );
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`git archive exited ${code}`))));
  });
}

const seconds = (ms: number) => (ms / 1000).toFixed(2);
const mbps = (bytes: number, ms: number) => (bytes / 1024 / 1024 / (ms / 1000)).toFixed(1);

const commit = await generateRepo();
const entries = await listTree(repoDir, commit);
const totalBytes = entries.reduce((n, e) => n + e.size, 0);
console.log(
  `repository: ${entries.length} files, ${(totalBytes / 1024 / 1024).toFixed(1)} MB, ${os.availableParallelism()} cores`,
);

const database = await connectDatabase({ kind: 'pglite-memory' });
await migrate(database);
const ctx = {
  database,
  clock: { now: () => new Date() },
  config: { cutWorkerTimeoutMs: 600_000 },
} as unknown as Parameters<typeof inspectRelease>[0];
const zip = path.join(os.tmpdir(), 'repo402-bench.zip');
const input = (version: string) => ({
  repoPath: repoDir,
  commit,
  listing: { id: `bench-${version}`, owner: 'bench', slug: 'repo' },
  version,
  publishedAt: new Date(),
  previous: [],
});

let t = performance.now();
await snapshot(commit, zip);
const snapshotMs = performance.now() - t;
const zipBytes = (await stat(zip)).size;

t = performance.now();
const result = await inspectRelease(ctx, input('1.0.0'));
const inspectMs = performance.now() - t;

t = performance.now();
await Promise.all([snapshot(commit, zip), inspectRelease(ctx, input('1.0.1'))]);
const together = performance.now() - t;

// The secret scan alone, single thread, over every text file: ours and secretlint's recommended preset.
const texts: Array<{ path: string; text: string }> = [];
await readBlobs(
  repoDir,
  entries.map((e) => e.sha),
  (i, content) => {
    if (!content.subarray(0, 8000).includes(0))
      texts.push({ path: entries[i]!.path, text: content.toString('utf8') });
  },
);
const textBytes = texts.reduce((n, f) => n + Buffer.byteLength(f.text), 0);
const scanner = createSecretScanner();
t = performance.now();
for (const f of texts) scanner.scan(f.path, f.text, lineIndex(f.text));
const oursMs = performance.now() - t;
const config = { rules: [{ id: '@secretlint/secretlint-rule-preset-recommend', rule: recommended }] };
t = performance.now();
for (const f of texts)
  await lintSource({
    source: { filePath: f.path, content: f.text, contentType: 'text' },
    options: { config },
  });
const secretlintMs = performance.now() - t;

console.log(
  `verdict ${result.verdict}, ${result.scan.files_scanned} text files scanned, ${result.scan.binary_files_skipped} binary skipped`,
);
console.log('| stage | seconds | MB/s |');
console.log('| --- | --- | --- |');
console.log(
  `| snapshot: git archive zip (${(zipBytes / 1024 / 1024).toFixed(0)} MB out) | ${seconds(snapshotMs)} | ${mbps(totalBytes, snapshotMs)} |`,
);
console.log(
  `| analysis + scan: inspectRelease (file pass in ${Math.min(4, os.availableParallelism())} workers, DB parts on PGlite) | ${seconds(inspectMs)} | ${mbps(totalBytes, inspectMs)} |`,
);
console.log(
  `| full cut: snapshot and inspectRelease side by side | ${seconds(together)} | ${mbps(totalBytes, together)} |`,
);
console.log(
  `| secret scan alone, repo402 rules (1 thread, ${(textBytes / 1024 / 1024).toFixed(0)} MB of text) | ${seconds(oursMs)} | ${mbps(textBytes, oursMs)} |`,
);
console.log(
  `| secret scan alone, @secretlint/core + preset-recommend (1 thread, same text) | ${seconds(secretlintMs)} | ${mbps(textBytes, secretlintMs)} |`,
);
await database.close();
await rm(zip, { force: true });
// secretlint's profiler observes a performance mark per rule and file (a million here) and, once the
// loop yields, matches each against all earlier ones: quadratic work that would keep the process
// busy for hours after the figures are out. (It runs after the timed loop, so it is not in them.)
process.exit(0);
