import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/identity/api-keys.js';
import { cutJob } from '../../src/releases/jobs.js';
import { findRelease } from '../../src/releases/store.js';
import { bearer, expectError, type RegisteredCreator, registerCreator } from '../identity/support.js';
import { type CreatedListing, createHostedListing, type SshKey, sshKeygen } from '../listings/support.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { BACKENDS } from '../support/db.js';
import { commitFile, commitTree, eventually, testInspector, workRepo, writeHostileTree } from './support.js';

const exec = promisify(execFile);
let key: SshKey;
beforeAll(async () => {
  key = await sshKeygen('ed25519');
});

describe.each(BACKENDS)('sync and publish on %s', (backend) => {
  let t: TestApp;
  let alice: RegisteredCreator;
  let listing: CreatedListing;
  let work: Awaited<ReturnType<typeof workRepo>>;

  beforeEach(async () => {
    t = await createTestApp({ backend, jobs: [cutJob] });
    t.ctx.inspectRelease = testInspector({
      failing: ['0.9.0'],
      derivativeOf: { '1.5.0': 'someone/original' },
    });
    alice = await registerCreator(t);
    listing = await createHostedListing(t, alice.apiKey, key.publicKey);
    work = await workRepo();
  });
  afterEach(async () => {
    await t.close();
  });

  const bare = () => path.join(t.dataDir, 'repos', listing.owner, `${listing.slug}.git`);
  /** Pushes straight into the bare repository (no SSH, so no cut is queued by the push). */
  const pushLocal = (...refs: string[]) => work.git('push', '-q', bare(), ...refs);
  const sync = (body?: object, apiKey = alice.apiKey, id = listing.id) =>
    t.app.inject({ method: 'POST', url: `/api/listings/${id}/sync`, headers: bearer(apiKey), payload: body });
  const tagCommit = async (tag: string) =>
    (await exec('git', ['--git-dir', bare(), 'rev-parse', `${tag}^{commit}`])).stdout.trim();

  it('with no body cuts the newest uncut tag, then the next, then answers version_exists', async () => {
    expectError(await sync(), 400, 'invalid_request');
    await commitFile(work, 'a.txt', 'a\n', 'One');
    await work.git('tag', 'v1.0.0');
    await commitFile(work, 'a.txt', 'b\n', 'Two');
    await work.git('tag', 'v1.1.0');
    await pushLocal('main', '--tags');
    const first = await sync();
    expect(first.statusCode, first.body).toBe(202);
    expect(first.json()).toEqual({
      listing_id: listing.id,
      version: '1.1.0',
      tag: 'v1.1.0',
      commit_sha: await tagCommit('v1.1.0'),
      state: 'queued',
      release_log_url: `http://repo402.test/api/v/${listing.owner}/${listing.slug}/releases`,
    });
    expect((await sync({})).json().version).toBe('1.0.0');
    expectError(await sync(), 409, 'version_exists');
    expectError(await sync({ version: '1.0.0' }), 409, 'version_exists');
    const release = await eventually(async () => findRelease(t.ctx.database.db, listing.id, '1.1.0'));
    expect(release.commitSha).toBe(await tagCommit('v1.1.0'));
  });

  it('cuts a tagged ref, an existing tag by version, and an untagged ref given a version (creating its tag)', async () => {
    await commitFile(work, 'a.txt', 'a\n', 'One');
    await work.git('tag', '-a', 'v1.0.0', '-m', 'One');
    await pushLocal('main', '--tags');
    await work.git('checkout', '-q', '-b', 'feature');
    const feature = await commitFile(work, 'b.txt', 'b\n', 'Feature');
    await pushLocal('feature');

    expect((await sync({ ref: 'main' })).json()).toMatchObject({ version: '1.0.0', tag: 'v1.0.0' });
    expectError(await sync({ ref: 'v1.0.0' }), 409, 'version_exists');
    const untagged = await sync({ ref: 'feature' });
    expectError(untagged, 400, 'invalid_request');
    expect(untagged.json().details.issues).toEqual([
      { field: 'version', reason: expect.stringContaining('required') },
    ]);
    const cut = await sync({ ref: 'feature', version: '2.0.0' });
    expect(cut.statusCode, cut.body).toBe(202);
    expect(cut.json()).toMatchObject({ version: '2.0.0', tag: 'v2.0.0', commit_sha: feature });
    expect(await tagCommit('v2.0.0')).toBe(feature);
    expectError(await sync({ ref: feature, version: '2.0.0' }), 409, 'version_exists');
    // v1.0.0 names another commit: the version exists.
    expectError(await sync({ ref: 'feature', version: '1.0.0' }), 409, 'version_exists');

    await commitFile(work, 'c.txt', 'c\n', 'More');
    await work.git('tag', 'v2.1.0');
    await pushLocal('feature', '--tags');
    expect((await sync({ version: '2.1.0' })).json()).toMatchObject({ version: '2.1.0' });
    const release = await eventually(async () => {
      const row = await findRelease(t.ctx.database.db, listing.id, '2.0.0');
      return row?.verdict === 'pass' ? row : undefined;
    });
    expect(release).toMatchObject({ commitSha: feature, tag: 'v2.0.0' });
  });

  it.each([
    ['an unknown ref', { ref: 'no-such-branch' }, 'ref'],
    ['a ref that looks like an option', { ref: '--output=/tmp/x' }, 'ref'],
    ['a malformed version', { ref: 'main', version: '1.2' }, 'version'],
    ['a version with a leading zero', { ref: 'main', version: '01.2.3' }, 'version'],
    ['a version with no tag and no ref', { version: '9.9.9' }, 'version'],
    ['an unknown field', { branch: 'main' }, ''],
    ['a ref that is a tag of another version', { ref: 'v1.0.0', version: '1.0.1' }, 'version'],
  ])('refuses %s', async (_name, body, field) => {
    await commitFile(work, 'a.txt', 'a\n', 'One');
    await work.git('tag', 'v1.0.0');
    await pushLocal('main', '--tags');
    const res = await sync(body);
    expectError(res, 400, 'invalid_request');
    if (field) expect(JSON.stringify(res.json().details)).toContain(`"field":"${field}"`);
  });

  it('answers repo_too_large before 202, claiming nothing', async () => {
    await commitFile(work, 'a.txt', 'a\n', 'One');
    // 20,001 files, written as git objects (writing and adding them as files took seconds).
    const many = await writeHostileTree(path.join(work.dir, '.git'), { width: 20_001, depth: 0 });
    await commitTree(work, many, 'Too many files');
    await work.git('tag', 'v1.0.0');
    await pushLocal('main', '--tags');
    const res = await sync({ ref: 'main' });
    expectError(res, 413, 'repo_too_large');
    expect(res.json().details).toEqual({
      limit: 'files',
      max_files: 20_000,
      max_bytes: 200 * 1024 * 1024,
      max_depth: 64,
      max_path_bytes: 4096,
      version: '1.0.0',
    });
    expect(res.json().message).toMatch(
      /^v1\.0\.0 cannot be cut: the tree of commit [0-9a-f]{12} holds more than/,
    );
    expectError(await sync({ ref: 'HEAD~1' }), 400, 'invalid_request');
    const small = await sync({ ref: 'HEAD~1', version: '0.1.0' });
    expect(small.statusCode, small.body).toBe(202);
    // A body-less sync picks v1.0.0 again (the newest tag not cut): the answer says so.
    const newest = await sync();
    expectError(newest, 413, 'repo_too_large');
    expect(newest.json().details).toMatchObject({ version: '1.0.0', limit: 'files' });
    expect(newest.json().message).toContain('give "version" (or "ref") to cut another tag');
  });

  it('answers 401, 403, 400, 404 and 410 before looking at the repository', async () => {
    const bob = await registerCreator(t);
    expectError(
      await t.app.inject({ method: 'POST', url: `/api/listings/${listing.id}/sync` }),
      401,
      'invalid_key',
    );
    const noRelease = await issueApiKey(t.ctx.database.db, {
      creatorId: alice.id,
      kind: 'agent',
      at: t.clock.now(),
      scopes: ['listings:read', 'listings:write'],
    });
    expectError(await sync({}, noRelease.apiKey), 403, 'insufficient_scope');
    expectError(await sync({}, alice.apiKey, 'not-a-uuid'), 400, 'invalid_request');
    expectError(await sync({}, bob.apiKey), 404, 'not_found');
    await t.app.inject({
      method: 'DELETE',
      url: `/api/listings/${listing.id}`,
      headers: bearer(alice.apiKey),
    });
    expectError(await sync({}), 410, 'retired');
  });

  it('publishes only past scan_failed and derivative_of, at the latest passing release', async () => {
    const publish = () =>
      t.app.inject({
        method: 'POST',
        url: `/api/listings/${listing.id}/publish`,
        headers: bearer(alice.apiKey),
      });
    const cutAndWait = async (version: string) => {
      await commitFile(work, 'v.txt', `${version}\n`, `Version ${version}`);
      await work.git('tag', `v${version}`);
      await pushLocal('main', '--tags');
      expect((await sync({ version })).statusCode).toBe(202);
      await eventually(async () => {
        const row = await findRelease(t.ctx.database.db, listing.id, version);
        return row && row.verdict !== 'pending' ? row : undefined;
      });
    };
    await t.app.inject({
      method: 'PATCH',
      url: `/api/listings/${listing.id}`,
      headers: bearer(alice.apiKey),
      payload: { description: 'Tools', trigger_hint: 'When building' },
    });
    await cutAndWait('0.9.0');
    const failed = await publish();
    expectError(failed, 409, 'scan_failed');
    expect(failed.json().details).toEqual({ version: '0.9.0' });
    const view = (
      await t.app.inject({ url: `/api/listings/${listing.id}`, headers: bearer(alice.apiKey) })
    ).json();
    expect(view.latest_release).toBeNull();
    expect(view.newest_release).toMatchObject({
      version: '0.9.0',
      scan: 'fail',
      scan_report: { verdict: 'fail' },
    });

    await cutAndWait('1.5.0');
    const derivative = await publish();
    expectError(derivative, 409, 'derivative_of');
    expect(derivative.json().details).toMatchObject({ derivative_of: 'someone/original' });

    await cutAndWait('1.6.0');
    const notReady = await publish();
    expectError(notReady, 409, 'listing_not_ready');
    expect(notReady.json().details).toEqual({ blocking: ['price'] });
    await t.app.inject({
      method: 'PATCH',
      url: `/api/listings/${listing.id}`,
      headers: bearer(alice.apiKey),
      payload: { price_micro: '1000000' },
    });
    const published = await publish();
    expect(published.statusCode, published.body).toBe(200);
    // Every release was cut before a price was set; each went on sale at the prices of publication.
    expect(published.json()).toMatchObject({
      status: 'published',
      latest_release: { version: '1.6.0', price_micro: '1000000', update_price_micro: '0' },
    });
    expect(published.json()).not.toHaveProperty('newest_release');
    // Publishing again answers the listing unchanged; a published listing can still be retired.
    expect((await publish()).statusCode).toBe(200);
    const log = (await t.app.inject({ url: `/api/v/${listing.owner}/${listing.slug}/releases` })).json();
    expect(log.releases.map((r: { version: string; scan: string }) => `${r.version}:${r.scan}`)).toEqual([
      '1.6.0:pass',
      '1.5.0:pass',
      '0.9.0:fail',
    ]);
    expect(log.releases.map((r: { price_micro: string }) => r.price_micro)).toEqual([
      '1000000',
      '1000000',
      '1000000',
    ]);
  });
});
