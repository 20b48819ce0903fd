/**
 * The secret scan alone, on one thread, over every text file of the 200 MB / 20,000-file
 * repository `bench/release-cut.ts` cuts: repo402's rules against `@secretlint/core` with its
 * recommended preset, in the same run. Wall and CPU time (a shared machine inflates only the wall).
 *
 * Run with `npx tsx bench/secret-scan.ts` (not part of `npm test`).
 */
import { lintSource } from '@secretlint/core';
import { creator as recommended } from '@secretlint/secretlint-rule-preset-recommend';
import { listTree, readBlobs } from '../src/analysis/git.js';
import { lineIndex } from '../src/scan/lines.js';
import { createSecretScanner } from '../src/scan/secrets.js';
import { largeBenchRepo } from './large-repo.js';

const { gitDir, commit } = await largeBenchRepo();
const entries = await listTree(gitDir, commit);
const texts: Array<{ path: string; text: string }> = [];
await readBlobs(
  gitDir,
  entries.map((e) => e.sha),
  (i, content) => {
    if (!content.subarray(0, 8000).includes(0))
      texts.push({ path: entries[i]!.path, text: content.toString('utf8') });
  },
);
const textBytes = texts.reduce((n, f) => n + Buffer.byteLength(f.text), 0);
const seconds = (ms: number) => (ms / 1000).toFixed(2);
const mbps = (bytes: number, ms: number) => (bytes / 1024 / 1024 / (ms / 1000)).toFixed(1);

async function timed(work: () => Promise<void> | void): Promise<{ wallMs: number; cpuMs: number }> {
  const t = performance.now();
  const cpu = process.cpuUsage();
  await work();
  const used = process.cpuUsage(cpu);
  return { wallMs: performance.now() - t, cpuMs: (used.user + used.system) / 1000 };
}

const scanner = createSecretScanner();
const ours = await timed(() => {
  for (const f of texts) scanner.scan(f.path, f.text, lineIndex(f.text));
});
const config = { rules: [{ id: '@secretlint/secretlint-rule-preset-recommend', rule: recommended }] };
const theirs = await timed(async () => {
  for (const f of texts)
    await lintSource({
      source: { filePath: f.path, content: f.text, contentType: 'text' },
      options: { config },
    });
});

console.log(`${texts.length} text files, ${(textBytes / 1024 / 1024).toFixed(0)} MB`);
console.log('| secret scan, 1 thread | wall s | CPU s | MB/s of CPU |');
console.log('| --- | --- | --- | --- |');
for (const [name, t] of [
  ['repo402 rules', ours],
  ['@secretlint/core + preset-recommend', theirs],
] as const)
  console.log(`| ${name} | ${seconds(t.wallMs)} | ${seconds(t.cpuMs)} | ${mbps(textBytes, t.cpuMs)} |`);
// secretlint's profiler observes a performance mark per rule and file (a million here) and, once the
// loop yields, matches each against all earlier ones: quadratic work that would keep the process
// busy for hours after the figures are out. (It runs after the timed loop, so it is not in them.)
process.exit(0);
