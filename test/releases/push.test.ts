import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { repoPath } from '../../src/git/repos.js';
import { type SshServer, startSshServer } from '../../src/git/ssh-server.js';
import { buildArtifact } from '../../src/releases/cut/artifact.js';
import { cutJob } from '../../src/releases/jobs.js';
import { hostedRepoAccess } from '../../src/releases/ssh-access.js';
import { findRelease } from '../../src/releases/store.js';
import { bearer, expectError, type RegisteredCreator, registerCreator } from '../identity/support.js';
import { createHostedListing, type SshKey, sshKeygen } from '../listings/support.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { PGLITE_ONLY } from '../support/db.js';
import { commitFile, eventually, gitOverSsh, testInspector, workRepo } from './support.js';

const exec = promisify(execFile);
let keyA: SshKey;
let keyB: SshKey;
let stranger: SshKey;

beforeAll(async () => {
  [keyA, keyB, stranger] = await Promise.all([
    sshKeygen('ed25519'),
    sshKeygen('ecdsa'),
    sshKeygen('ed25519'),
  ]);
});

describe.each(PGLITE_ONLY)('pushing over SSH on %s', (backend) => {
  let t: TestApp;
  let ssh: SshServer;
  let alice: RegisteredCreator;

  beforeEach(async () => {
    t = await createTestApp({ backend, jobs: [cutJob] });
    t.ctx.inspectRelease = testInspector({ failing: ['1.1.0'] });
    ssh = await startSshServer(t.ctx, hostedRepoAccess(t.ctx), { port: 0, host: '127.0.0.1' });
    alice = await registerCreator(t);
  });
  afterEach(async () => {
    await ssh.close();
    await t.close();
  });

  const remoteOf = (listing: { owner: string; slug: string }) =>
    `ssh://git@127.0.0.1:${ssh.port}/${listing.owner}/${listing.slug}.git`;

  it('cuts a release per pushed tag: zip bytes match artifact_sha256 and hold the tagged tree', async () => {
    const listing = await createHostedListing(t, alice.apiKey, keyA.publicKey, { price_micro: '2500000' });
    const work = await workRepo();
    await commitFile(work, 'README.md', '# Tools\n', 'Add readme');
    await commitFile(work, 'src/index.js', 'export const x = 1;\n', 'Add index');
    const first = (await work.git('rev-parse', 'HEAD')).trim();
    await work.git('tag', '-a', 'v1.0.0', '-m', 'First release\n\nEverything is new.');
    await commitFile(work, 'src/index.js', 'export const x = 2;\nexport const y = 3;\n', 'Change index');
    await commitFile(work, 'docs/guide.md', 'Guide\n', 'Write a guide');
    await work.git('tag', 'v1.1.0');
    await commitFile(work, 'src/more.js', 'more\n', 'Add more');
    await work.git('tag', 'v1.2.0');
    await work.git('tag', 'not-a-release');

    const push = await gitOverSsh(work.dir, keyA.file, ['push', remoteOf(listing), 'main', '--tags']);
    expect(push.code, push.stderr).toBe(0);
    expect(push.stderr).toContain('repo402: release 1.0.0 queued');
    expect(push.stderr).toContain('repo402: release 1.2.0 queued');

    // Releases are cut by the worker, then inspected through the seam (a test fixture here).
    const db = t.ctx.database.db;
    const release = await eventually(async () => {
      const row = await findRelease(db, listing.id, '1.2.0');
      const older = await findRelease(db, listing.id, '1.0.0');
      return row?.verdict !== 'pending' && older?.verdict !== 'pending' && row && older ? row : undefined;
    });
    expect(release.tag).toBe('v1.2.0');

    // Publish, so the public log is readable.
    const patch = await t.app.inject({
      method: 'PATCH',
      url: `/api/listings/${listing.id}`,
      headers: bearer(alice.apiKey),
      payload: { description: 'Tools', trigger_hint: 'When you need tools' },
    });
    expect(patch.statusCode).toBe(200);
    const publish = await t.app.inject({
      method: 'POST',
      url: `/api/listings/${listing.id}/publish`,
      headers: bearer(alice.apiKey),
    });
    expect(publish.statusCode, publish.body).toBe(200);
    expect(publish.json()).toMatchObject({
      status: 'published',
      latest_release: { version: '1.2.0', scan: 'pass' },
    });

    const log = await t.app.inject({ url: `/api/v/${listing.owner}/${listing.slug}/releases` });
    expect(log.statusCode, log.body).toBe(200);
    const releases = log.json().releases;
    expect(releases.map((r: { version: string }) => r.version)).toEqual(['1.2.0', '1.1.0', '1.0.0']);
    const v1 = releases[2];
    expect(v1).toMatchObject({
      tag: 'v1.0.0',
      commit_sha: first,
      changelog: 'First release\n\nEverything is new.',
      scan: 'pass',
      price_micro: '2500000',
      update_price_micro: '0',
      analyzer_version: 'test-fixture-analyzer',
      diff_summary: { files_added: 2, files_changed: 0, files_removed: 0, additions: 2, deletions: 0 },
    });
    // A failing release is logged too; lightweight tags get the commit subjects since the previous release.
    expect(releases[1]).toMatchObject({ scan: 'fail', changelog: '- Write a guide\n- Change index' });
    expect(releases[1].diff_summary).toEqual({
      files_added: 1,
      files_changed: 1,
      files_removed: 0,
      additions: 3,
      deletions: 1,
      components_touched: ['docs', 'src'],
    });

    // The stored zip: its SHA-256 is artifact_sha256, its bytes are the zip built from the creator's
    // own clone of the tag (identical trees, identical zips), its entries the tagged tree under <slug>/.
    const row = (await findRelease(db, listing.id, '1.0.0'))!;
    expect(row.artifactKey).toBe(`artifacts/sha256/${v1.artifact_sha256}.zip`);
    const { stream } = await t.ctx.blobs.open(row.artifactKey!);
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    const zip = Buffer.concat(chunks);
    expect(createHash('sha256').update(zip).digest('hex')).toBe(v1.artifact_sha256);
    const expected = path.join(await mkdtemp(path.join(os.tmpdir(), 'repo402-zip-')), 'expected.zip');
    await buildArtifact({
      gitDir: path.join(work.dir, '.git'),
      commit: first,
      prefix: `${listing.slug}/`,
      outFile: expected,
    });
    expect(zip.equals(await readFile(expected))).toBe(true);
    const zipFile = path.join(await mkdtemp(path.join(os.tmpdir(), 'repo402-zip-')), 'a.zip');
    await writeFile(zipFile, zip);
    const entries = (await exec('zipinfo', ['-1', zipFile])).stdout
      .split('\n')
      .filter((e) => e && !e.endsWith('/'));
    const tree = (await work.git('ls-tree', '-r', '--name-only', 'v1.0.0')).split('\n').filter(Boolean);
    expect(entries.sort()).toEqual(tree.map((file) => `${listing.slug}/${file}`).sort());

    // The SBOM the inspector returned is stored beside the artifact.
    const sbom = await t.ctx.blobs.open(row.sbomKey!);
    const sbomChunks: Buffer[] = [];
    for await (const chunk of sbom.stream) sbomChunks.push(chunk as Buffer);
    expect(JSON.parse(Buffer.concat(sbomChunks).toString())).toEqual({ fixture: true, version: '1.0.0' });

    // The creator's view carries the full scan report only on the single-listing route.
    const one = (
      await t.app.inject({ url: `/api/listings/${listing.id}`, headers: bearer(alice.apiKey) })
    ).json();
    expect(one.latest_release.scan_report).toMatchObject({ verdict: 'pass', fixture: true });
    const list = (await t.app.inject({ url: '/api/listings', headers: bearer(alice.apiKey) })).json();
    expect(list.listings[0].latest_release).not.toHaveProperty('scan_report');

    // A clone over SSH gets the same tree back.
    const clone = await mkdtemp(path.join(os.tmpdir(), 'repo402-clone-'));
    const cloned = await gitOverSsh(clone, keyA.file, ['clone', '-q', remoteOf(listing), 'copy']);
    expect(cloned.code, cloned.stderr).toBe(0);
    expect(await readFile(path.join(clone, 'copy', 'src', 'more.js'), 'utf8')).toBe('more\n');
  });

  it('refuses moved and deleted release tags with a message the client shows', async () => {
    const listing = await createHostedListing(t, alice.apiKey, keyA.publicKey);
    const work = await workRepo();
    await commitFile(work, 'a.txt', 'a\n', 'One');
    await work.git('tag', 'v1.0.0');
    expect((await gitOverSsh(work.dir, keyA.file, ['push', remoteOf(listing), 'main', '--tags'])).code).toBe(
      0,
    );
    await commitFile(work, 'a.txt', 'b\n', 'Two');
    await work.git('tag', '-f', 'v1.0.0');
    const moved = await gitOverSsh(work.dir, keyA.file, [
      'push',
      '--force',
      remoteOf(listing),
      'main',
      'v1.0.0',
    ]);
    expect(moved.code).not.toBe(0);
    expect(moved.stderr).toContain('remote: repo402: tag v1.0.0 already exists and cannot be moved');
    const deleted = await gitOverSsh(work.dir, keyA.file, ['push', remoteOf(listing), ':refs/tags/v1.0.0']);
    expect(deleted.code).not.toBe(0);
    expect(deleted.stderr).toContain('remote: repo402: tag v1.0.0 cannot be deleted');
  });

  it('refuses every v<digit> tag that is not a release tag, with what one looks like; other tags are free', async () => {
    const listing = await createHostedListing(t, alice.apiKey, keyA.publicKey);
    const work = await workRepo();
    await commitFile(work, 'a.txt', 'a\n', 'One');
    expect((await gitOverSsh(work.dir, keyA.file, ['push', remoteOf(listing), 'main'])).code).toBe(0);
    const blob = (await work.git('rev-parse', 'HEAD:a.txt')).trim();
    const tree = (await work.git('rev-parse', 'HEAD^{tree}')).trim();
    const notRelease = (tag: string) =>
      `remote: repo402: tag ${tag} is not a release tag: release tags look like vMAJOR.MINOR.PATCH, e.g. v1.2.0`;
    const refused: Array<[string, string, string]> = [
      ['v1.2', 'HEAD', notRelease('v1.2')],
      ['v1.4.0-beta', 'HEAD', notRelease('v1.4.0-beta')],
      ['v01.2.3', 'HEAD', notRelease('v01.2.3')],
      ['v1234567890.0.0', 'HEAD', notRelease('v1234567890.0.0')],
      ['v3.0.0', blob, 'remote: repo402: release tag v3.0.0 must point at a commit'],
      ['v3.1.0', tree, 'remote: repo402: release tag v3.1.0 must point at a commit'],
    ];
    for (const [tag, target, message] of refused) {
      await work.git('tag', tag, target);
      const pushed = await gitOverSsh(work.dir, keyA.file, ['push', remoteOf(listing), tag]);
      expect(pushed.code, tag).not.toBe(0);
      expect(pushed.stderr).toContain(message);
      // Only the hook's own words: no line of git's from the check behind them.
      expect(pushed.stderr).not.toMatch(/^remote: (error|fatal):/m);
    }
    // One bad tag refuses the whole push: the release tag beside it is not taken either.
    await work.git('tag', 'v1.2.0');
    const mixed = await gitOverSsh(work.dir, keyA.file, ['push', remoteOf(listing), 'v1.2.0', 'v1.2']);
    expect(mixed.code).not.toBe(0);
    expect(mixed.stderr).toContain(notRelease('v1.2'));
    const bare = repoPath(t.ctx.config, listing.owner, listing.slug);
    const tagsInBare = async () =>
      (await exec('git', ['--git-dir', bare, 'tag', '--list'])).stdout.trim().split('\n').filter(Boolean);
    expect(await tagsInBare()).toEqual([]);

    const accepted = await gitOverSsh(work.dir, keyA.file, ['push', remoteOf(listing), 'v1.2.0']);
    expect(accepted.code, accepted.stderr).toBe(0);
    expect(accepted.stderr).toContain('repo402: release 1.2.0 queued');
    await work.git('tag', '-a', 'v2.0.0', '-m', 'An annotated tag peels to its commit');
    const annotated = await gitOverSsh(work.dir, keyA.file, ['push', remoteOf(listing), 'v2.0.0']);
    expect(annotated.code, annotated.stderr).toBe(0);
    expect(await tagsInBare()).toEqual(['v1.2.0', 'v2.0.0']);
    const { rows } = await t.database.query<{ tag: string }>(
      'select tag from release_cuts where listing_id = $1 order by tag',
      [listing.id],
    );
    expect(rows.map((row) => row.tag)).toEqual(['v1.2.0', 'v2.0.0']);

    // A v<digit> tag from before this rule can be deleted, never moved; other tags are the creator's.
    await exec('git', ['--git-dir', bare, 'tag', 'v1.3', (await work.git('rev-parse', 'HEAD')).trim()]);
    await work.git('tag', 'nightly');
    expect((await gitOverSsh(work.dir, keyA.file, ['push', remoteOf(listing), 'nightly'])).code).toBe(0);
    await work.git('tag', 'vnext');
    expect((await gitOverSsh(work.dir, keyA.file, ['push', remoteOf(listing), 'vnext'])).code).toBe(0);
    await commitFile(work, 'a.txt', 'b\n', 'Two');
    const moved = await gitOverSsh(work.dir, keyA.file, [
      'push',
      '--force',
      remoteOf(listing),
      'HEAD:refs/tags/v1.3',
    ]);
    expect(moved.code).not.toBe(0);
    expect(moved.stderr).toContain(notRelease('v1.3'));
    const deleted = await gitOverSsh(work.dir, keyA.file, ['push', remoteOf(listing), ':refs/tags/v1.3']);
    expect(deleted.code, deleted.stderr).toBe(0);
    await work.git('tag', '-f', 'nightly');
    const movedOwn = await gitOverSsh(work.dir, keyA.file, ['push', '--force', remoteOf(listing), 'nightly']);
    expect(movedOwn.code, movedOwn.stderr).toBe(0);
    const deletedOwn = await gitOverSsh(work.dir, keyA.file, [
      'push',
      remoteOf(listing),
      ':refs/tags/nightly',
    ]);
    expect(deletedOwn.code, deletedOwn.stderr).toBe(0);
    expect(await tagsInBare()).toEqual(['v1.2.0', 'v2.0.0', 'vnext']);
  });

  it("lets a deploy key reach only its own listing's repository", async () => {
    const first = await createHostedListing(t, alice.apiKey, keyA.publicKey);
    const second = await createHostedListing(t, alice.apiKey, keyB.publicKey);
    const work = await workRepo();
    await commitFile(work, 'a.txt', 'a\n', 'One');
    const wrongRepo = await gitOverSsh(work.dir, keyB.file, ['push', remoteOf(first), 'main']);
    expect(wrongRepo.code).not.toBe(0);
    expect(wrongRepo.stderr).toContain('repo402: no such repository, or this key may not use it');
    expect((await gitOverSsh(work.dir, keyB.file, ['push', remoteOf(second), 'main'])).code).toBe(0);
    const unknownKey = await gitOverSsh(work.dir, stranger.file, ['push', remoteOf(first), 'main']);
    expect(unknownKey.code).not.toBe(0);
    expect(unknownKey.stderr).toMatch(/Permission denied/);
    const otherPath = await gitOverSsh(work.dir, keyA.file, [
      'push',
      `ssh://git@127.0.0.1:${ssh.port}/${first.owner}/../${second.slug}.git`,
      'main',
    ]);
    expect(otherPath.code).not.toBe(0);
    // No shell, no other command.
    const shell = await exec('ssh', [
      '-i',
      keyA.file,
      '-o',
      'IdentitiesOnly=yes',
      '-o',
      'StrictHostKeyChecking=no',
      '-o',
      'UserKnownHostsFile=/dev/null',
      '-o',
      'LogLevel=ERROR',
      '-p',
      String(ssh.port),
      'git@127.0.0.1',
      'cat /etc/passwd',
    ]).then(
      () => 0,
      (error: { code: number }) => error.code,
    );
    expect(shell).not.toBe(0);
  });

  it('stops the old key when the deploy key is replaced, and refuses pushes after retiring', async () => {
    const listing = await createHostedListing(t, alice.apiKey, keyA.publicKey);
    const work = await workRepo();
    await commitFile(work, 'a.txt', 'a\n', 'One');
    await t.app.inject({
      method: 'PUT',
      url: `/api/listings/${listing.id}/ssh-key`,
      headers: bearer(alice.apiKey),
      payload: { ssh_public_key: keyB.publicKey },
    });
    expect((await gitOverSsh(work.dir, keyA.file, ['push', remoteOf(listing), 'main'])).code).not.toBe(0);
    expect((await gitOverSsh(work.dir, keyB.file, ['push', remoteOf(listing), 'main'])).code).toBe(0);
    await t.app.inject({
      method: 'DELETE',
      url: `/api/listings/${listing.id}`,
      headers: bearer(alice.apiKey),
    });
    await commitFile(work, 'a.txt', 'b\n', 'Two');
    const refused = await gitOverSsh(work.dir, keyB.file, ['push', remoteOf(listing), 'main']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('archived read-only');
    // Archived, not deleted: still readable with the key.
    const clone = await mkdtemp(path.join(os.tmpdir(), 'repo402-clone-'));
    expect((await gitOverSsh(clone, keyB.file, ['clone', '-q', remoteOf(listing), 'copy'])).code).toBe(0);
  });

  it('keeps drafts out of the public log, also once retired without ever being published', async () => {
    const listing = await createHostedListing(t, alice.apiKey, keyA.publicKey, { price_micro: '2500000' });
    const work = await workRepo();
    await commitFile(work, 'README.md', '# Draft\n', 'Add readme');
    await work.git('tag', '-a', 'v0.1.0', '-m', 'SECRET draft changelog');
    const push = await gitOverSsh(work.dir, keyA.file, ['push', remoteOf(listing), 'main', '--tags']);
    expect(push.code, push.stderr).toBe(0);
    await eventually(async () => {
      const row = await findRelease(t.ctx.database.db, listing.id, '0.1.0');
      return row && row.verdict !== 'pending' ? row : undefined;
    });
    const base = `/api/v/${listing.owner}/${listing.slug}`;
    const unseen = async () => {
      for (const url of [
        `${base}/releases`,
        `${base}/releases/0.1.0/attestation`,
        base,
        `/api/label/${listing.owner}/${listing.slug}`,
      ]) {
        const res = await t.app.inject({ url });
        expect(res.statusCode, url).toBe(404);
        expect(res.body).not.toContain('SECRET');
      }
      expectError(await t.app.inject({ url: `/api/r/${listing.owner}/${listing.slug}` }), 404, 'not_found');
    };
    await unseen();
    expectError(
      await t.app.inject({ url: `/api/v/${listing.owner}/nothing-here/releases` }),
      404,
      'not_found',
    );
    const retired = await t.app.inject({
      method: 'DELETE',
      url: `/api/listings/${listing.id}`,
      headers: bearer(alice.apiKey),
    });
    expect(retired.statusCode, retired.body).toBe(200);
    // Nothing of it was ever public, so retiring it shows nothing either.
    await unseen();
    // Its creator still sees it.
    const own = await t.app.inject({ url: `/api/listings/${listing.id}`, headers: bearer(alice.apiKey) });
    expect(own.json()).toMatchObject({ status: 'retired' });
  });

  it('commits a LICENSE to main as the service; the creator must pull before pushing again', async () => {
    const listing = await createHostedListing(t, alice.apiKey, keyA.publicKey);
    const bob = await registerCreator(t);
    const licence = (body: object, apiKey = alice.apiKey) =>
      t.app.inject({
        method: 'POST',
        url: `/api/listings/${listing.id}/licence`,
        headers: bearer(apiKey),
        payload: body,
      });
    // Before the first push there is nothing to commit on top of: a LICENSE as the first commit
    // would make that push a non-fast-forward, refused.
    const empty = await licence({ spdx: 'MIT' });
    expectError(empty, 400, 'invalid_request');
    expect(empty.json().details.issues[0].reason).toContain('push your code first');
    const work = await workRepo();
    await commitFile(work, 'a.txt', 'a\n', 'One');
    const first = await gitOverSsh(work.dir, keyA.file, ['push', remoteOf(listing), 'main']);
    expect(first.code, first.stderr).toBe(0);

    expectError(await licence({ spdx: 'GPL-3.0-only' }), 400, 'invalid_request');
    expectError(await licence({}), 400, 'invalid_request');
    expectError(await licence({ spdx: 'MIT' }, bob.apiKey), 404, 'not_found');
    const res = await licence({ spdx: 'MIT' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      listing_id: listing.id,
      spdx: 'MIT',
      branch: 'main',
      path: 'LICENSE',
      committed: true,
    });
    expect(res.json().next_step).toContain('git pull');
    const again = await licence({ spdx: 'MIT' });
    expect(again.json()).toMatchObject({ committed: false, commit_sha: res.json().commit_sha });
    const view = (
      await t.app.inject({ url: `/api/listings/${listing.id}`, headers: bearer(alice.apiKey) })
    ).json();
    expect(view.licence).toBe('MIT');

    await commitFile(work, 'b.txt', 'b\n', 'Two');
    const refused = await gitOverSsh(work.dir, keyA.file, ['push', remoteOf(listing), 'main']);
    expect(refused.code).not.toBe(0);
    const forced = await gitOverSsh(work.dir, keyA.file, ['push', '--force', remoteOf(listing), 'main']);
    expect(forced.code).not.toBe(0);
    expect(forced.stderr).toMatch(/non-fast-forward|denying/);
    const pulled = await gitOverSsh(work.dir, keyA.file, [
      'pull',
      '-q',
      '--no-rebase',
      '--no-edit',
      remoteOf(listing),
      'main',
    ]);
    expect(pulled.code, pulled.stderr).toBe(0);
    const text = await readFile(path.join(work.dir, 'LICENSE'), 'utf8');
    expect(text).toContain(`Copyright (c) ${t.clock.now().getUTCFullYear()} ${listing.owner}`);
    expect(text).toContain('Permission is hereby granted, free of charge');
    expect((await gitOverSsh(work.dir, keyA.file, ['push', remoteOf(listing), 'main'])).code).toBe(0);

    await t.app.inject({
      method: 'DELETE',
      url: `/api/listings/${listing.id}`,
      headers: bearer(alice.apiKey),
    });
    expectError(await licence({ spdx: 'Apache-2.0' }), 410, 'retired');
  });
});
