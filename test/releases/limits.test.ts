import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { eq } from 'drizzle-orm';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { releaseCuts, releases } from '../../src/db/schema/index.js';
import { type Listing, listingById } from '../../src/listings/service.js';
import { AppError } from '../../src/platform/errors.js';
import { parseVersion } from '../../src/platform/versions.js';
import { requestCut } from '../../src/releases/cut/claims.js';
import { runCut } from '../../src/releases/cut/run.js';
import { findCut, findRelease, storedBytesOf } from '../../src/releases/store.js';
import { bearer, expectError, type RegisteredCreator, registerCreator } from '../identity/support.js';
import { createHostedListing, type SshKey, sshKeygen } from '../listings/support.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { BACKENDS } from '../support/db.js';
import { commitFile, testInspector, workRepo } from './support.js';

const exec = promisify(execFile);
let key: SshKey;
beforeAll(async () => {
  key = await sshKeygen('ed25519');
});

describe.each(BACKENDS)('release limits on %s', (backend) => {
  let t: TestApp;
  afterEach(async () => {
    await t.close();
  });

  let alice: RegisteredCreator;
  /** An app with `env`, and a listing whose repository's main holds one commit. */
  async function setUp(env: Record<string, string>) {
    t = await createTestApp({ backend, env });
    t.ctx.inspectRelease = testInspector();
    alice = await registerCreator(t);
    const created = await createHostedListing(t, alice.apiKey, key.publicKey);
    const work = await workRepo();
    const commit = await commitFile(work, 'a.txt', 'a\n', 'One');
    const bare = path.join(t.dataDir, 'repos', created.owner, `${created.slug}.git`);
    await work.git('push', '-q', bare, 'main');
    const listing = (await listingById(t.ctx.database.db, created.id))!;
    return { listing, work, bare, commit };
  }
  const claim = (listing: Listing, version: string, commitSha: string) =>
    requestCut(t.ctx, listing, { version, tag: `v${version}`, commitSha, trigger: 'sync' });
  const sync = (listing: Listing, body: object) =>
    t.app.inject({
      method: 'POST',
      url: `/api/listings/${listing.id}/sync`,
      headers: bearer(alice.apiKey),
      payload: body,
    });

  it('claims at most RELEASES_PER_LISTING_PER_DAY per UTC day, however many are claimed at once', async () => {
    const { listing, work, bare, commit } = await setUp({ RELEASES_PER_LISTING_PER_DAY: '3' });
    const versions = ['1.0.0', '1.1.0', '1.2.0', '1.3.0', '1.4.0'];
    const results = await Promise.allSettled(versions.map((version) => claim(listing, version, commit)));
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(3);
    for (const result of results.filter((result) => result.status === 'rejected')) {
      expect(result.reason).toBeInstanceOf(AppError);
      expect((result.reason as AppError).code).toBe('rate_limited');
    }
    const claimed = await t.ctx.database.db
      .select()
      .from(releaseCuts)
      .where(eq(releaseCuts.listingId, listing.id));
    expect(claimed).toHaveLength(3);

    // Sync says so, with the wait until the UTC day ends (the clock reads 12:00).
    await work.git('tag', 'v2.0.0');
    await work.git('push', '-q', bare, 'v2.0.0');
    const refused = await sync(listing, { version: '2.0.0' });
    expectError(refused, 429, 'rate_limited');
    expect(refused.headers['retry-after']).toBe('43200');
    expect(refused.json()).toMatchObject({
      retry_after_seconds: 43200,
      details: { limit: 'releases_per_day', max_per_day: 3, resets_at: '2026-11-23T00:00:00.000Z' },
    });
    t.clock.set(new Date('2026-11-23T00:00:01.000Z'));
    const next = await sync(listing, { version: '2.0.0' });
    expect(next.statusCode, next.body).toBe(202);
  });

  it('refuses new claims once the creator’s stored zips reach CREATOR_STORAGE_BYTES', async () => {
    const { listing, commit } = await setUp({ CREATOR_STORAGE_BYTES: '1000' });
    // Another listing of the same creator already stores a zip of 1,000 bytes.
    const other = await createHostedListing(t, alice.apiKey, key.publicKey);
    await t.ctx.database.db.insert(releases).values({
      listingId: other.id,
      version: '1.0.0',
      ...parseVersion('1.0.0')!,
      tag: 'v1.0.0',
      commitSha: commit,
      artifactKey: `artifacts/sha256/${'c'.repeat(64)}.zip`,
      artifactSha256: 'c'.repeat(64),
      sizeBytes: 1000,
      publishedAt: t.clock.now(),
      changelog: '',
      verdict: 'pass',
    });
    const refused = await sync(listing, { ref: 'main', version: '1.0.0' });
    expectError(refused, 413, 'repo_too_large');
    expect(refused.json().details).toEqual({ limit: 'creator_storage', stored_bytes: 1000, max_bytes: 1000 });
    await expect(claim(listing, '1.0.0', commit)).rejects.toMatchObject({ code: 'repo_too_large' });
    const claimed = await t.ctx.database.db
      .select()
      .from(releaseCuts)
      .where(eq(releaseCuts.listingId, listing.id));
    expect(claimed).toEqual([]);
  });

  it('stores the zip of one tree once, however many versions share it, and counts it once', async () => {
    const { listing, commit } = await setUp({});
    for (const version of ['1.0.0', '1.1.0']) {
      await runCut(t.ctx, (await claim(listing, version, commit))!.id, { finalAttempt: false });
    }
    const [first, second] = await Promise.all(
      ['1.0.0', '1.1.0'].map(async (version) => (await findRelease(t.ctx.database.db, listing.id, version))!),
    );
    expect(first!.artifactSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(second).toMatchObject({
      artifactSha256: first!.artifactSha256,
      artifactKey: `artifacts/sha256/${first!.artifactSha256}.zip`,
      sizeBytes: first!.sizeBytes,
    });
    expect(first!.artifactKey).toBe(second!.artifactKey);
    expect(await readdir(path.join(t.dataDir, 'blobs', 'artifacts', 'sha256'))).toEqual([
      `${first!.artifactSha256}.zip`,
    ]);
    expect(await storedBytesOf(t.ctx.database.db, alice.id)).toBe(first!.sizeBytes);
    // One top folder, the listing's slug: the version is not inside the zip, so one tree is one zip.
    const zipFile = path.join(t.dataDir, 'blobs', ...first!.artifactKey!.split('/'));
    const entries = (await exec('zipinfo', ['-1', zipFile])).stdout.split('\n').filter(Boolean);
    expect(entries).toEqual([`${listing.slug}/a.txt`]);
  });

  it('refuses a release whose new zip would take the creator past CREATOR_STORAGE_BYTES', async () => {
    const { listing, work, bare } = await setUp({ CREATOR_STORAGE_BYTES: '5000' });
    // About 3,300 bytes of zip each: random text barely compresses.
    const noise = () => randomBytes(3000).toString('base64');
    const big = await commitFile(work, 'noise.txt', noise(), 'Noise');
    await work.git('push', '-q', bare, 'main');
    await runCut(t.ctx, (await claim(listing, '1.0.0', big))!.id, { finalAttempt: false });
    const kept = (await findRelease(t.ctx.database.db, listing.id, '1.0.0'))!;
    expect(kept.verdict).toBe('pass');

    const other = await commitFile(work, 'noise.txt', noise(), 'Other noise');
    await work.git('push', '-q', bare, 'main');
    const cut = (await claim(listing, '1.1.0', other))!;
    await runCut(t.ctx, cut.id, { finalAttempt: false });
    expect(await findRelease(t.ctx.database.db, listing.id, '1.1.0')).toMatchObject({
      verdict: 'fail',
      artifactSha256: null,
      scan: expect.objectContaining({
        findings: [
          expect.objectContaining({ check: 'limits', rule_id: 'creator-storage', tier: 'blocking' }),
        ],
      }),
    });
    expect(await findCut(t.ctx.database.db, cut.id)).toMatchObject({ state: 'refused' });
    // The refused zip was never stored; a version of a tree already stored costs nothing.
    await runCut(t.ctx, (await claim(listing, '1.2.0', big))!.id, { finalAttempt: false });
    expect(await findRelease(t.ctx.database.db, listing.id, '1.2.0')).toMatchObject({
      verdict: 'pass',
      artifactKey: kept.artifactKey,
    });
    expect(await storedBytesOf(t.ctx.database.db, alice.id)).toBe(kept.sizeBytes);
    expect(await readdir(path.join(t.dataDir, 'blobs', 'artifacts', 'sha256'))).toHaveLength(1);
  });

  it('keeps a changelog to 20,000 characters, whatever the tag message holds', async () => {
    const { listing, work, bare, commit } = await setUp({});
    const message = path.join(work.dir, '.git', 'TAG_MESSAGE');
    await writeFile(message, `Release\n\n${'A very long line of notes. '.repeat(20_000)}`);
    await work.git('tag', '-a', 'v1.0.0', '-F', message);
    await work.git('push', '-q', bare, 'v1.0.0');
    await runCut(t.ctx, (await claim(listing, '1.0.0', commit))!.id, { finalAttempt: false });
    const release = (await findRelease(t.ctx.database.db, listing.id, '1.0.0'))!;
    expect(release.changelog.startsWith('Release\n\nA very long line of notes.')).toBe(true);
    expect(release.changelog.length).toBe(20_001);
    expect(release.changelog.endsWith('…')).toBe(true);
  });
});
