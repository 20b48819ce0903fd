/**
 * The release zip of the 200 MB / 20,000-file repository (`bench/zip-reuse-repo.ts`): a fresh
 * build of v1.0.0, the second release v1.0.1 (10 files changed) built fresh and with reuse of
 * v1.0.0's zip (fetched from a local blob store as a cut would), and `git archive --format=zip`
 * of the same trees as the floor. Checks that v1.0.1's zip is byte-identical either way.
 *
 * Needs the compiled service (`npm run build`): the zip worker loads dist/, as in production.
 * `npx tsx bench/zip-reuse.ts [--rounds N] [--before <dist folder>]`: `--before` also times the
 * `buildArtifact` of another build (e.g. the commit before the reuse, compiled elsewhere), each
 * round alternating the two, since the machine is shared and its load moves.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { benchRepo } from './zip-reuse-repo.js';

type ArtifactModule = typeof import('../src/releases/cut/artifact.js');

const run = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values: args } = parseArgs({
  options: { rounds: { type: 'string', default: '2' }, before: { type: 'string' } },
});
const load = async (dist: string, file: string) => {
  if (!existsSync(path.join(dist, file)))
    throw new Error(`no ${file} in ${dist}: run \`npm run build\` first`);
  return import(pathToFileURL(path.join(dist, file)).href);
};
const dist = path.join(root, 'dist');
const after = (await load(dist, 'releases/cut/artifact.js')) as ArtifactModule;
const before = args.before
  ? ((await load(path.resolve(args.before), 'releases/cut/artifact.js')) as ArtifactModule)
  : undefined;
const { fetchEarlierZip } = (await load(
  dist,
  'releases/cut/earlier-zip.js',
)) as typeof import('../src/releases/cut/earlier-zip.js');
const { localBlobStore } = (await load(
  dist,
  'platform/blobs/local.js',
)) as typeof import('../src/platform/blobs/local.js');

const repo = await benchRepo();
const tmp = await mkdtemp(path.join(os.tmpdir(), 'repo402-zip-reuse-'));
const blobs = localBlobStore(path.join(tmp, 'blobs'));
const out = (name: string) => path.join(tmp, name);
const loadAverage = () =>
  os
    .loadavg()
    .map((n) => n.toFixed(1))
    .join(' ');
const times = new Map<string, string[]>();
/** Wall time, and this process's CPU time (the zip worker is a thread of it; git and `git archive` are not). */
async function timed<T>(label: string, work: () => Promise<T>): Promise<T> {
  const start = performance.now();
  const cpu = process.cpuUsage();
  const result = await work();
  const seconds = (performance.now() - start) / 1000;
  const used = process.cpuUsage(cpu);
  const figure = `${seconds.toFixed(2)} (CPU ${((used.user + used.system) / 1e6).toFixed(2)})`;
  times.set(label, [...(times.get(label) ?? []), figure]);
  console.log(`${label}: ${figure} s, load ${loadAverage()}`);
  return result;
}
const build = (
  module: ArtifactModule,
  commit: string,
  outFile: string,
  reuse?: { commit: string; zipFile: string },
) => module.buildArtifact({ gitDir: repo.gitDir, commit, prefix: 'bench/', outFile, reuse });
const gitArchive = (commit: string) =>
  run('sh', [
    '-c',
    `git -C "$0" archive --format=zip --prefix=bench/ "$1" > "$2"`,
    repo.gitDir,
    commit,
    out('git.zip'),
  ]);

try {
  console.log(`${os.availableParallelism()} cores, zlib ${process.versions.zlib}, load ${loadAverage()}`);
  for (let round = 1; round <= Number(args.rounds); round++) {
    console.log(`round ${round}`);
    const first = await timed('v1.0.0 fresh, this build', () => build(after, repo.first, out('first.zip')));
    if (before)
      await timed('v1.0.0 fresh, --before build', () => build(before, repo.first, out('before.zip')));
    await timed('v1.0.0 git archive', () => gitArchive(repo.first));
    const fresh = await timed('v1.0.1 fresh, this build', () =>
      build(after, repo.second, out('second-fresh.zip')),
    );
    if (before)
      await timed('v1.0.1 fresh, --before build', () => build(before, repo.second, out('before.zip')));
    await timed('v1.0.1 git archive', () => gitArchive(repo.second));
    await blobs.putFile(`artifacts/sha256/${first.sha256}.zip`, out('first.zip'), 'application/zip');
    const earlierDir = await mkdtemp(path.join(tmp, 'cut-'));
    const earlier = await timed('v1.0.0 zip fetched from the local blob store', () =>
      fetchEarlierZip(
        blobs,
        {
          commitSha: repo.first,
          artifactKey: `artifacts/sha256/${first.sha256}.zip`,
          artifactSha256: first.sha256,
        },
        earlierDir,
      ),
    );
    const reused = await timed('v1.0.1 with reuse of v1.0.0', () =>
      build(after, repo.second, out('second-reused.zip'), earlier),
    );
    await rm(earlierDir, { recursive: true, force: true });
    if (reused.sha256 !== fresh.sha256 || reused.reuseSkipped)
      throw new Error(`v1.0.1 differs with reuse (${reused.reuseSkipped ?? 'other bytes'})`);
    console.log(
      `v1.0.1: ${fresh.sizeBytes} bytes either way, sha256 ${fresh.sha256.slice(0, 16)}…, ${reused.reusedEntries} entries reused`,
    );
  }
  console.log('| step | seconds (CPU seconds of this process), each round |');
  console.log('| --- | --- |');
  for (const [label, figures] of times) console.log(`| ${label} | ${figures.join(', ')} |`);
} finally {
  await rm(tmp, { recursive: true, force: true });
}
