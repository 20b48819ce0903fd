/**
 * Release cuts as a creator meets them, through the running service (`node dist/cli.js serve` on
 * its embedded PGlite, pushed to over SSH), in one run:
 *
 * - the floor: `git archive --format=zip` of the 200 MB / 20,000-file tree;
 * - its first cut: from `git push <remote> v1.0.0` (the objects were pushed with `main` before)
 *   to the release's verdict in the creator's view;
 * - a second release changing 10 files (`v1.0.1`), timed the same way;
 * - push to visible for a small repository (400 files): 20 times a commit and its tag pushed,
 *   then the time from `git push` returning to the release being listed (pending), and to its
 *   verdict; p50 and p95.
 *
 * Needs the compiled service (`npm run build`), `git`, `ssh` and `ssh-keygen`. Run with
 * `npx tsx bench/release-cut.ts` (not part of `npm test`); `--pushes N` changes the 20.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { gitOverSsh } from '../test/releases/support.js';
import {
  api,
  createHostedListing,
  type ListingView,
  registerCreator,
  type SeededCreator,
} from '../test/support/seed-over-http.js';
import { largeBenchRepo } from './large-repo.js';
import { startRepo402 } from './repo402-process.js';
import { benchToolRepo } from './seed-listing.js';

const run = promisify(execFile);
const { values } = parseArgs({ options: { pushes: { type: 'string', default: '20' } } });
const PUSHES = Number(values.pushes);

const seconds = (ms: number) => (ms / 1000).toFixed(2);
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

const startLoad = load();
const large = await largeBenchRepo();
const scratch = await mkdtemp(path.join(os.tmpdir(), 'repo402-cut-bench-'));

// The floor, with git's object cache as warm as the cut will find it.
let t = performance.now();
await run('git', [
  '-C',
  large.gitDir,
  'archive',
  '--format=zip',
  '-o',
  path.join(scratch, 'floor.zip'),
  'v1.0.0',
]);
const floorMs = performance.now() - t;

const server = await startRepo402('pglite', { RELEASES_PER_LISTING_PER_DAY: '1000' });
try {
  const target = { url: server.url, cliEnv: { DATA_DIR: server.dataDir } };
  const creator = await registerCreator(target, 'bench-cutter');

  /** Polls the creator's view of the listing until `version` is listed, then until it has a verdict. */
  async function watch(listingId: string, version: string, from: number) {
    let listedMs: number | undefined;
    for (const deadline = Date.now() + 15 * 60_000; Date.now() < deadline; ) {
      const view = await api<ListingView>(server.url, 'GET', `/api/listings/${listingId}`, 200, {
        apiKey: creator.apiKey,
      }).catch((error: unknown) => {
        let alive = true;
        try {
          process.kill(server.pid, 0);
        } catch {
          alive = false;
        }
        throw new Error(`reading ${version}'s listing failed; the server is ${alive ? 'running' : 'gone'}`, {
          cause: error,
        });
      });
      // A passing release is the latest; a pending or failing one newer than it is `newest_release`.
      const passed = view.latest_release?.version === version;
      const newest = view.newest_release?.version === version ? view.newest_release : undefined;
      if (passed || newest) listedMs ??= performance.now() - from;
      if (passed) return { listedMs: listedMs!, verdictMs: performance.now() - from, scan: 'pass' };
      if (newest && newest.scan !== 'pending')
        return { listedMs: listedMs!, verdictMs: performance.now() - from, scan: newest.scan };
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`${version} was not cut within 15 minutes`);
  }

  /** git as the creator runs it, with the listing's key. */
  async function gitAs(cwd: string, owner: SeededCreator, args: string[]) {
    const push = await gitOverSsh(cwd, owner.key.file, args);
    if (push.code !== 0) throw new Error(`git ${args.join(' ')} failed: ${push.stderr}`);
  }

  // The large repository: its objects first, then each tag alone, so a cut is what is timed.
  const bigListing = await createHostedListing(server, creator, {
    slug: 'bench-large',
    priceMicro: '1000000',
  });
  await gitAs(large.gitDir, creator, ['push', bigListing.remote, 'main']);
  t = performance.now();
  await gitAs(large.gitDir, creator, ['push', bigListing.remote, 'v1.0.0']);
  const first = await watch(bigListing.id, '1.0.0', t);
  t = performance.now();
  await gitAs(large.gitDir, creator, ['push', bigListing.remote, 'v1.0.1']);
  const second = await watch(bigListing.id, '1.0.1', t);

  // The small repository: push to visible, one commit and tag at a time.
  const small = await benchToolRepo();
  const smallListing = await createHostedListing(server, creator, {
    slug: 'bench-small',
    priceMicro: '1000000',
  });
  await gitAs(small, creator, ['push', smallListing.remote, 'main', 'v1.0.0']);
  await watch(smallListing.id, '1.0.0', performance.now());
  const listed: number[] = [];
  const verdicts: number[] = [];
  for (let i = 1; i <= PUSHES; i++) {
    await writeFile(path.join(small, 'src/module-0/file-0.ts'), `export const round = ${i};\n`);
    await gitAs(small, creator, ['commit', '-qam', `Round ${i}`]);
    await gitAs(small, creator, ['tag', `v1.0.${i}`]);
    await gitAs(small, creator, ['push', smallListing.remote, `v1.0.${i}`]);
    const seen = await watch(smallListing.id, `1.0.${i}`, performance.now());
    listed.push(seen.listedMs);
    verdicts.push(seen.verdictMs);
  }
  await rm(small, { recursive: true, force: true });
  listed.sort((a, b) => a - b);
  verdicts.sort((a, b) => a - b);

  console.log(`load average at start ${startLoad}, at end ${load()}; ${os.availableParallelism()} cores`);
  console.log('| measure | seconds | goal |');
  console.log('| --- | --- | --- |');
  console.log(`| floor: git archive --format=zip, 200 MB / 20,000 files | ${seconds(floorMs)} | |`);
  console.log(
    `| first cut, push of v1.0.0 to its verdict (${first.scan}) | ${seconds(first.verdictMs)} (${(first.verdictMs / floorMs).toFixed(2)}× the floor) | ≤ 1.4× the floor |`,
  );
  console.log(
    `| second release, 10 files changed, push of v1.0.1 to its verdict (${second.scan}) | ${seconds(second.verdictMs)} | ≤ 3 s |`,
  );
  console.log(
    `| small repository, push returned to listed, ${PUSHES} pushes | p50 ${seconds(percentile(listed, 50))}, p95 ${seconds(percentile(listed, 95))} | p50 ≤ 2 s |`,
  );
  console.log(
    `| small repository, push returned to verdict | p50 ${seconds(percentile(verdicts, 50))}, p95 ${seconds(percentile(verdicts, 95))} | |`,
  );
} finally {
  await server.stop();
  await rm(scratch, { recursive: true, force: true });
}
