import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { releaseCuts } from '../../src/db/schema/index.js';
import { listingById } from '../../src/listings/service.js';
import { requestCut } from '../../src/releases/cut/claims.js';
import { runCut } from '../../src/releases/cut/run.js';
import { cutJob, resendCutsJob } from '../../src/releases/jobs.js';
import { publishedRelease } from '../../src/releases/service.js';
import { findCut, findRelease } from '../../src/releases/store.js';
import { bearer, registerCreator } from '../identity/support.js';
import { createHostedListing, type SshKey, sshKeygen } from '../listings/support.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { BACKENDS } from '../support/db.js';
import { commitFile, commitTree, eventually, workRepo, writeHostileTree } from './support.js';

let key: SshKey;
beforeAll(async () => {
  key = await sshKeygen('ed25519');
});

describe.each(BACKENDS)('release cut faults on %s', (backend) => {
  let t: TestApp;
  beforeEach(async () => {
    // No workers: the test drives runCut itself, as a worker would on each attempt.
    t = await createTestApp({ backend });
  });
  afterEach(async () => {
    await t.close();
  });

  let apiKey: string;
  /** A listing whose repository holds `commit` (made by `make` in a work repository), claimed as 1.0.0. */
  async function claimedCut(
    make = (work: Awaited<ReturnType<typeof workRepo>>) => commitFile(work, 'a.txt', 'a\n', 'One'),
    bare = false,
  ) {
    const alice = await registerCreator(t);
    apiKey = alice.apiKey;
    const created = await createHostedListing(t, alice.apiKey, key.publicKey, { price_micro: '1000000' });
    const work = await workRepo({ bare });
    const commit = await make(work);
    const repo = path.join(t.dataDir, 'repos', created.owner, `${created.slug}.git`);
    await work.git('push', '-q', repo, 'main');
    const listing = (await listingById(t.ctx.database.db, created.id))!;
    const cut = await requestCut(t.ctx, listing, {
      version: '1.0.0',
      tag: 'v1.0.0',
      commitSha: commit,
      trigger: 'sync',
    });
    return { listing, cut: cut!, work, bare: repo };
  }

  it('leaves no half release when storage fails mid-cut, and completes on the retry', async () => {
    const { listing, cut } = await claimedCut();
    const putFile = t.ctx.blobs.putFile;
    t.ctx.blobs.putFile = async () => {
      throw new Error('storage unavailable');
    };
    await expect(runCut(t.ctx, cut.id, { finalAttempt: false })).rejects.toThrow('storage unavailable');
    expect(await findRelease(t.ctx.database.db, listing.id, '1.0.0')).toBeUndefined();
    expect((await findCut(t.ctx.database.db, cut.id))?.state).toBe('queued');
    t.ctx.blobs.putFile = putFile;
    await runCut(t.ctx, cut.id, { finalAttempt: false });
    const release = await findRelease(t.ctx.database.db, listing.id, '1.0.0');
    expect(release).toMatchObject({ verdict: 'pass', commitSha: cut.commitSha });
    expect(release?.scannerVersion).toBeTruthy();
    expect((await findCut(t.ctx.database.db, cut.id))?.state).toBe('cut');
    // Running again (a duplicate job) changes nothing.
    await runCut(t.ctx, cut.id, { finalAttempt: false });
    expect((await findRelease(t.ctx.database.db, listing.id, '1.0.0'))?.id).toBe(release!.id);
  });

  it('marks the cut failed on the last attempt, with a reason that names no server path', async () => {
    const { listing, cut } = await claimedCut();
    t.ctx.blobs.putFile = async () => {
      throw new Error('storage unavailable');
    };
    await runCut(t.ctx, cut.id, { finalAttempt: true });
    const row = await findCut(t.ctx.database.db, cut.id);
    const failureReason = `internal: the release could not be cut (cut ${cut.id}); tag a new version to try again`;
    expect(row).toMatchObject({ state: 'failed', failureReason });
    expect(await findRelease(t.ctx.database.db, listing.id, '1.0.0')).toBeUndefined();
    const rows = await t.ctx.database.db.select().from(releaseCuts);
    expect(rows).toHaveLength(1);
    // The creator sees why the version never became a release.
    const view = await t.app.inject({ url: `/api/listings/${listing.id}`, headers: bearer(apiKey) });
    expect(view.json().cuts).toEqual([
      expect.objectContaining({ version: '1.0.0', state: 'failed', failure_reason: failureReason }),
    ]);
  });

  it('never shows the creator a server path when git fails for good', async () => {
    const { cut, bare } = await claimedCut();
    // The repository is gone (a disk fault): git's own message names its directory.
    await rm(bare, { recursive: true, force: true });
    await expect(runCut(t.ctx, cut.id, { finalAttempt: false })).rejects.toThrow();
    await runCut(t.ctx, cut.id, { finalAttempt: true });
    const row = await findCut(t.ctx.database.db, cut.id);
    expect(row?.state).toBe('failed');
    for (const serverPath of [t.dataDir, os.tmpdir(), 'repos/'])
      expect(row?.failureReason).not.toContain(serverPath);
  });

  it.each([
    ['10 entries nested 10 levels', { width: 10, depth: 10 }, 'file-count'],
    ['a path 5,000 directories deep', { width: 1, depth: 5000 }, 'path-depth'],
  ])(
    'refuses a tree of %s on the first attempt: a failing release with no zip, in the log and the creator’s view',
    { timeout: 180_000 },
    async (_name, shape, rule) => {
      const { listing, cut, bare } = await claimedCut(
        async (work) => commitTree(work, await writeHostileTree(work.dir, shape), 'A hostile tree'),
        true,
      );
      // A refusal does not throw: the job succeeds at once instead of retrying for minutes.
      await runCut(t.ctx, cut.id, { finalAttempt: false });
      const refused = await findRelease(t.ctx.database.db, listing.id, '1.0.0');
      expect(refused).toMatchObject({
        verdict: 'fail',
        commitSha: cut.commitSha,
        artifactKey: null,
        artifactSha256: null,
        sizeBytes: null,
        changelog: '- A hostile tree',
      });
      const report = refused!.scan as { checks: unknown[]; findings: Array<Record<string, unknown>> };
      expect(report.checks).toEqual([expect.objectContaining({ id: 'limits', status: 'fail', findings: 1 })]);
      expect(report.findings).toEqual([
        expect.objectContaining({ check: 'limits', tier: 'blocking', rule_id: rule, kind: 'limit' }),
      ]);
      const row = await findCut(t.ctx.database.db, cut.id);
      expect(row).toMatchObject({
        state: 'refused',
        failureReason: expect.stringMatching(/^repo_too_large: /),
      });
      for (const text of [row!.failureReason!, JSON.stringify(refused!.scan)]) {
        expect(text).not.toContain(t.dataDir);
        expect(text).not.toContain(os.tmpdir());
      }
      // Running again (a duplicate job) changes nothing.
      await runCut(t.ctx, cut.id, { finalAttempt: false });
      expect((await findRelease(t.ctx.database.db, listing.id, '1.0.0'))?.id).toBe(refused!.id);

      // The next release is cut as usual, and is not diffed against the refused tree.
      const sane = await workRepo();
      const next = await commitFile(sane, 'b.txt', 'b\n', 'A sane tree');
      await sane.git('push', '-q', bare, 'main:refs/heads/next');
      const second = (await requestCut(t.ctx, listing, {
        version: '1.1.0',
        tag: 'v1.1.0',
        commitSha: next,
        trigger: 'sync',
      }))!;
      await runCut(t.ctx, second.id, { finalAttempt: false });
      expect(await findRelease(t.ctx.database.db, listing.id, '1.1.0')).toMatchObject({ verdict: 'pass' });

      // The creator sees the refused release with its report; nothing is left among the cuts.
      const view = (
        await t.app.inject({ url: `/api/listings/${listing.id}`, headers: bearer(apiKey) })
      ).json();
      expect(view.cuts).toEqual([]);
      expect(view.latest_release).toMatchObject({ version: '1.1.0', scan: 'pass' });
      await t.app.inject({
        method: 'PATCH',
        url: `/api/listings/${listing.id}`,
        headers: bearer(apiKey),
        payload: { description: 'Tools', trigger_hint: 'When you need tools' },
      });
      const published = await t.app.inject({
        method: 'POST',
        url: `/api/listings/${listing.id}/publish`,
        headers: bearer(apiKey),
      });
      expect(published.statusCode, published.body).toBe(200);
      // The public log lists it like any failing release, with no artifact.
      const log = (await t.app.inject({ url: `/api/v/${listing.owner}/${listing.slug}/releases` })).json();
      expect(log.releases).toEqual([
        expect.objectContaining({
          version: '1.1.0',
          scan: 'pass',
          artifact_sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
        }),
        expect.objectContaining({
          version: '1.0.0',
          tag: 'v1.0.0',
          commit_sha: cut.commitSha,
          scan: 'fail',
          artifact_sha256: null,
          diff_summary: null,
          scanner_version: expect.any(String),
          analyzer_version: null,
        }),
      ]);
      expect(log.releases[0].diff_summary).toMatchObject({ files_added: 1, files_removed: 0 });
      // Never for sale.
      expect(await publishedRelease(t.ctx.database.db, listing.id, '1.0.0')).toBeNull();
    },
  );
});

describe.each(BACKENDS)('re-sending dropped cuts on %s', (backend) => {
  let t: TestApp;
  afterEach(async () => {
    await t.close();
  });

  it('re-sends a claim whose job a crash dropped, once it is five minutes old, and the cut completes', async () => {
    t = await createTestApp({ backend, jobs: [cutJob] });
    const alice = await registerCreator(t);
    const created = await createHostedListing(t, alice.apiKey, key.publicKey);
    const work = await workRepo();
    const commit = await commitFile(work, 'a.txt', 'a\n', 'One');
    await work.git('push', '-q', path.join(t.dataDir, 'repos', created.owner, `${created.slug}.git`), 'main');
    const listing = (await listingById(t.ctx.database.db, created.id))!;
    // The process dies between the claim and the send: the claim is saved, no job exists.
    const queue = t.ctx.jobs;
    t.ctx.jobs = undefined;
    const cut = (await requestCut(t.ctx, listing, {
      version: '1.0.0',
      tag: 'v1.0.0',
      commitSha: commit,
      trigger: 'sync',
    }))!;
    t.ctx.jobs = queue;

    // A claim younger than five minutes may still have its job in flight: left alone.
    await resendCutsJob.run(t.ctx, {}, { id: 'tick-1', retryCount: 0 });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await findCut(t.ctx.database.db, cut.id))?.state).toBe('queued');

    t.clock.advance(6 * 60 * 1000);
    await resendCutsJob.run(t.ctx, {}, { id: 'tick-2', retryCount: 0 });
    // The cut records the release, then its inspection fills in the verdict.
    const release = await eventually(async () => {
      const row = await findRelease(t.ctx.database.db, listing.id, '1.0.0');
      return row && row.verdict !== 'pending' ? row : undefined;
    }, 60_000);
    expect(release).toMatchObject({ commitSha: commit, verdict: 'pass' });
    expect((await findCut(t.ctx.database.db, cut.id))?.state).toBe('cut');
  });
});
