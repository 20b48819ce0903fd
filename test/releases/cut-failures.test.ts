import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { releaseCuts } from '../../src/db/schema/index.js';
import { listingById } from '../../src/listings/service.js';
import { runCut } from '../../src/releases/cut.js';
import { cutJob, resendCutsJob } from '../../src/releases/cut-job.js';
import { requestCut } from '../../src/releases/cuts.js';
import { findCut, findRelease } from '../../src/releases/store.js';
import { bearer, registerCreator } from '../identity/support.js';
import { createHostedListing, type SshKey, sshKeygen } from '../listings/support.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { BACKENDS } from '../support/db.js';
import { commitFile, eventually, workRepo } from './support.js';

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
  async function claimedCut() {
    const alice = await registerCreator(t);
    apiKey = alice.apiKey;
    const created = await createHostedListing(t, alice.apiKey, key.publicKey);
    const work = await workRepo();
    const commit = await commitFile(work, 'a.txt', 'a\n', 'One');
    await work.git('push', '-q', path.join(t.dataDir, 'repos', created.owner, `${created.slug}.git`), 'main');
    const listing = (await listingById(t.ctx.database.db, created.id))!;
    const cut = await requestCut(t.ctx, listing, {
      version: '1.0.0',
      tag: 'v1.0.0',
      commitSha: commit,
      trigger: 'sync',
    });
    return { listing, cut: cut! };
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

  it('marks the cut failed with the reason on the last attempt', async () => {
    const { listing, cut } = await claimedCut();
    t.ctx.blobs.putFile = async () => {
      throw new Error('storage unavailable');
    };
    await runCut(t.ctx, cut.id, { finalAttempt: true });
    const row = await findCut(t.ctx.database.db, cut.id);
    expect(row).toMatchObject({ state: 'failed', failureReason: 'internal: storage unavailable' });
    expect(await findRelease(t.ctx.database.db, listing.id, '1.0.0')).toBeUndefined();
    const rows = await t.ctx.database.db.select().from(releaseCuts);
    expect(rows).toHaveLength(1);
    // The creator sees why the version never became a release.
    const view = await t.app.inject({ url: `/api/listings/${listing.id}`, headers: bearer(apiKey) });
    expect(view.json().cuts).toEqual([
      expect.objectContaining({
        version: '1.0.0',
        state: 'failed',
        failure_reason: 'internal: storage unavailable',
      }),
    ]);
  });
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
