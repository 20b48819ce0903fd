import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { releases } from '../../src/db/schema/index.js';
import { repoPath } from '../../src/git/repos.js';
import { type SshServer, startSshServer } from '../../src/git/ssh-server.js';
import { parseVersion } from '../../src/platform/versions.js';
import { cutJob } from '../../src/releases/jobs.js';
import { hostedRepoAccess } from '../../src/releases/ssh-access.js';
import { findRelease, storedBytesOf } from '../../src/releases/store.js';
import { bearer, type RegisteredCreator, registerCreator } from '../identity/support.js';
import { type CreatedListing, createHostedListing, type SshKey, sshKeygen } from '../listings/support.js';
import {
  commitFile,
  commitTree,
  eventually,
  gitOverSsh,
  workRepo,
  writeHostileTree,
} from '../releases/support.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { PGLITE_ONLY } from '../support/db.js';

/**
 * The hostile repositories of issue 13, pushed over the real SSH server with the real git client,
 * each cut by the real release pipeline (pg-boss workers, the real inspector): the verdict, the
 * public release log, and that the service kept answering while it dealt with them.
 */

const exec = promisify(execFile);
let key: SshKey;
beforeAll(async () => {
  key = await sshKeygen('ed25519');
});

describe.each(PGLITE_ONLY)('hostile repositories pushed over SSH on %s', (backend) => {
  let t: TestApp;
  let ssh: SshServer;
  let alice: RegisteredCreator;
  afterEach(async () => {
    await ssh?.close();
    await t?.close();
  });

  async function start(env: Record<string, string> = {}) {
    t = await createTestApp({ backend, jobs: [cutJob], env });
    ssh = await startSshServer(t.ctx, hostedRepoAccess(t.ctx), { port: 0, host: '127.0.0.1' });
    alice = await registerCreator(t);
  }
  const remoteOf = (listing: { owner: string; slug: string }) =>
    `ssh://git@127.0.0.1:${ssh.port}/${listing.owner}/${listing.slug}.git`;
  const push = (dir: string, listing: CreatedListing, ...refs: string[]) =>
    gitOverSsh(dir, key.file, ['push', remoteOf(listing), ...refs]);
  const tagsOf = async (listing: CreatedListing) =>
    (
      await exec('git', ['--git-dir', repoPath(t.ctx.config, listing.owner, listing.slug), 'tag', '--list'])
    ).stdout
      .split('\n')
      .filter(Boolean);
  /** The service answers at once while it works: a health probe and the creator's view. */
  async function expectResponsive(listing: CreatedListing) {
    for (const request of [
      { url: '/api/health' },
      { url: `/api/listings/${listing.id}`, headers: bearer(alice.apiKey) },
    ]) {
      const started = Date.now();
      const res = await t.app.inject(request);
      expect(res.statusCode, res.body).toBe(200);
      expect(Date.now() - started).toBeLessThan(3000);
    }
  }
  const settled = (listing: CreatedListing, versions: string[], timeoutMs = 240_000) =>
    eventually(async () => {
      const rows = await Promise.all(versions.map((v) => findRelease(t.ctx.database.db, listing.id, v)));
      return rows.every((row) => row && row.verdict !== 'pending') ? rows.map((row) => row!) : undefined;
    }, timeoutMs);
  /** The pg-boss job that cut `version` ran once and completed: no retry was spent on it. */
  async function expectCutOnce(listing: CreatedListing, version: string) {
    const [cut] = (
      await t.database.query<{ id: string; state: string; failure_reason: string | null }>(
        'select id, state, failure_reason from release_cuts where listing_id = $1 and version = $2',
        [listing.id, version],
      )
    ).rows;
    // pg-boss records the completion just after the handler returns, so after the release.
    const rows = await eventually(async () => {
      const { rows } = await t.database.query<{ state: string; retry_count: number }>(
        `select state, retry_count from pgboss.job where name = 'releases.cut' and data->>'cutId' = $1`,
        [cut!.id],
      );
      return rows.every((row) => row.state !== 'active' && row.state !== 'created') ? rows : undefined;
    }, 10_000);
    expect(rows).toEqual([{ state: 'completed', retry_count: 0 }]);
    return cut!;
  }

  it('refuses a push of 40 release tags; 10 tags of one 20 MB commit make 10 releases and one stored zip; the day’s limit holds', async () => {
    await start({ RELEASES_PER_LISTING_PER_DAY: '12' });
    const listing = await createHostedListing(t, alice.apiKey, key.publicKey);
    const work = await workRepo();
    await writeFile(path.join(work.dir, 'data.bin'), randomBytes(20 * 1024 * 1024));
    await commitFile(work, 'README.md', '# Big\n', 'A 20 MB file');
    const versions = Array.from({ length: 40 }, (_, i) => `1.${i}.0`);
    for (const version of versions) await work.git('tag', `v${version}`);

    const flood = await push(work.dir, listing, 'main', '--tags');
    expect(flood.code).not.toBe(0);
    expect(flood.stderr).toContain(
      'remote: repo402: this push adds 40 release tags; one push may add at most 10. Push them in smaller batches.',
    );
    expect(await tagsOf(listing)).toEqual([]);

    const first = versions.slice(0, 10);
    const pushed = await push(work.dir, listing, 'main', ...first.map((v) => `v${v}`));
    expect(pushed.code, pushed.stderr).toBe(0);
    for (const version of first) expect(pushed.stderr).toContain(`repo402: release ${version} queued`);
    await expectResponsive(listing);
    const cut = await settled(listing, first);
    expect(new Set(cut.map((release) => release.verdict))).toEqual(new Set(['pass']));
    // One tree, one zip: stored once, counted once.
    const sha256 = cut[0]!.artifactSha256!;
    expect(new Set(cut.map((release) => release.artifactSha256))).toEqual(new Set([sha256]));
    expect(await readdir(path.join(t.dataDir, 'blobs', 'artifacts', 'sha256'))).toEqual([`${sha256}.zip`]);
    expect(await storedBytesOf(t.ctx.database.db, alice.id)).toBe(cut[0]!.sizeBytes);
    expect(cut[0]!.sizeBytes).toBeGreaterThan(20 * 1024 * 1024);

    // Two more releases are left today: three tags are refused whole.
    const more = await push(work.dir, listing, 'v1.10.0', 'v1.11.0', 'v1.12.0');
    expect(more.code).not.toBe(0);
    expect(more.stderr).toContain(
      'remote: repo402: this push adds 3 release tags, but this listing may cut only 2 more releases today (at most 12 per UTC day). Push the rest after 2026-11-23T00:00:00.000Z.',
    );
    expect((await tagsOf(listing)).length).toBe(10);
  }, 600_000);

  it('refuses new release tags at push once the creator’s stored zips are at their limit', async () => {
    await start({ CREATOR_STORAGE_BYTES: '1000' });
    const listing = await createHostedListing(t, alice.apiKey, key.publicKey);
    const other = await createHostedListing(t, alice.apiKey, key.publicKey);
    await t.ctx.database.db.insert(releases).values({
      listingId: other.id,
      version: '1.0.0',
      ...parseVersion('1.0.0')!,
      tag: 'v1.0.0',
      commitSha: 'a'.repeat(40),
      artifactKey: `artifacts/sha256/${'c'.repeat(64)}.zip`,
      artifactSha256: 'c'.repeat(64),
      sizeBytes: 1000,
      publishedAt: t.clock.now(),
      changelog: '',
      verdict: 'pass',
    });
    const work = await workRepo();
    await commitFile(work, 'a.txt', 'a\n', 'One');
    await work.git('tag', 'v1.0.0');
    const refused = await push(work.dir, listing, 'main', '--tags');
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(
      'remote: repo402: your releases already store 1000 bytes of zips, the limit of 1000 per creator: no new release can be cut.',
    );
    // Branches alone still go through.
    expect((await push(work.dir, listing, 'main')).code).toBe(0);
    expect(await tagsOf(listing)).toEqual([]);
  });

  it('refuses tree bombs once, at the first attempt, logs them as failing releases, and keeps answering', async () => {
    await start();
    const listing = await createHostedListing(t, alice.apiKey, key.publicKey, { price_micro: '1000000' });
    const work = await workRepo();
    await commitFile(work, 'README.md', '# Tools\n\nSane tools.\n', 'Sane');
    await work.git('tag', 'v1.0.0');
    expect((await push(work.dir, listing, 'main', 'v1.0.0')).code).toBe(0);
    await settled(listing, ['1.0.0']);
    await t.app.inject({
      method: 'PATCH',
      url: `/api/listings/${listing.id}`,
      headers: bearer(alice.apiKey),
      payload: { description: 'Tools', trigger_hint: 'When you need tools' },
    });
    const published = await t.app.inject({
      method: 'POST',
      url: `/api/listings/${listing.id}/publish`,
      headers: bearer(alice.apiKey),
    });
    expect(published.statusCode, published.body).toBe(200);

    // 10 entries nested 10 levels (10^10 files by name) and a path 30,000 directories deep, each
    // on a branch of its own with a release tag. git itself accepts both.
    const hostile = await workRepo({ bare: true });
    const bomb = await commitTree(
      hostile,
      await writeHostileTree(hostile.dir, { width: 10, depth: 10 }),
      'Bomb',
    );
    await hostile.git('tag', 'v1.1.0', bomb);
    const deep = await commitTree(
      hostile,
      await writeHostileTree(hostile.dir, { width: 1, depth: 30_000 }),
      'Deep',
    );
    await hostile.git('tag', '-a', 'v1.2.0', '-m', 'Deep release', deep);
    const pushed = await push(
      hostile.dir,
      listing,
      `${bomb}:refs/heads/bomb`,
      `${deep}:refs/heads/deep`,
      'v1.1.0',
      'v1.2.0',
    );
    expect(pushed.code, pushed.stderr).toBe(0);
    expect(pushed.stderr).toContain('repo402: release 1.1.0 queued');
    expect(pushed.stderr).toContain('repo402: release 1.2.0 queued');
    await expectResponsive(listing);
    const [bombRelease, deepRelease] = await settled(listing, ['1.1.0', '1.2.0'], 120_000);
    await expectResponsive(listing);

    for (const [release, rule] of [
      [bombRelease!, 'file-count'],
      [deepRelease!, 'path-depth'],
    ] as const) {
      expect(release).toMatchObject({
        verdict: 'fail',
        artifactKey: null,
        artifactSha256: null,
        sizeBytes: null,
      });
      expect((release.scan as { findings: unknown[] }).findings).toEqual([
        expect.objectContaining({ check: 'limits', tier: 'blocking', rule_id: rule }),
      ]);
      const cut = await expectCutOnce(listing, release.version);
      expect(cut).toMatchObject({
        state: 'refused',
        failure_reason: expect.stringMatching(/^repo_too_large: /),
      });
      for (const text of [cut.failure_reason!, JSON.stringify(release.scan)]) {
        expect(text).not.toContain(t.dataDir);
        expect(text).not.toContain('/tmp/');
      }
    }

    // The public log lists both, failing, with no artifact; the release on sale is unchanged.
    const log = (await t.app.inject({ url: `/api/v/${listing.owner}/${listing.slug}/releases` })).json();
    expect(log.releases).toEqual([
      expect.objectContaining({
        version: '1.2.0',
        tag: 'v1.2.0',
        commit_sha: deep,
        scan: 'fail',
        artifact_sha256: null,
        changelog: 'Deep release',
      }),
      expect.objectContaining({ version: '1.1.0', commit_sha: bomb, scan: 'fail', artifact_sha256: null }),
      expect.objectContaining({ version: '1.0.0', scan: 'pass' }),
    ]);
    const view = (
      await t.app.inject({ url: `/api/listings/${listing.id}`, headers: bearer(alice.apiKey) })
    ).json();
    expect(view.latest_release).toMatchObject({ version: '1.0.0', scan: 'pass' });
    expect(view.newest_release).toMatchObject({
      version: '1.2.0',
      scan: 'fail',
      artifact_sha256: null,
      scan_report: { verdict: 'fail', findings: [expect.objectContaining({ rule_id: 'path-depth' })] },
    });
    expect(view.cuts).toEqual([]);
    const label = await t.app.inject({ url: `/api/label/${listing.owner}/${listing.slug}` });
    expect(label.json()).toMatchObject({ version: '1.0.0' });
  }, 600_000);

  it('cuts a tag of an annotated tag at the commit it finally names', async () => {
    await start();
    const listing = await createHostedListing(t, alice.apiKey, key.publicKey);
    const work = await workRepo();
    const commit = await commitFile(work, 'a.txt', 'a\n', 'One');
    await work.git('tag', '-a', 'inner', '-m', 'Inner');
    await work.git('tag', '-a', 'v1.0.0', '-m', 'A tag of a tag', 'inner');
    const pushed = await push(work.dir, listing, 'main', 'v1.0.0');
    expect(pushed.code, pushed.stderr).toBe(0);
    expect(pushed.stderr).toContain('repo402: release 1.0.0 queued');
    const [release] = await settled(listing, ['1.0.0']);
    expect(release).toMatchObject({
      commitSha: commit,
      tag: 'v1.0.0',
      verdict: 'pass',
      changelog: 'A tag of a tag',
    });
  });
});
