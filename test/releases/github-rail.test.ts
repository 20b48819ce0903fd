import { createHash, randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Writable } from 'node:stream';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveCommit } from '../../src/git/refs.js';
import { repoPath } from '../../src/git/repos.js';
import { maskTokens } from '../../src/github/client.js';
import { REPLAY_WINDOW_MS } from '../../src/releases/github-webhooks.js';
import { cutJob } from '../../src/releases/jobs.js';
import { findRelease } from '../../src/releases/store.js';
import { bearer, expectError, type RegisteredCreator, registerCreator } from '../identity/support.js';
import { createPaymentsApp, fundedWallet, type PaymentsTestApp } from '../purchases/support.js';
import { PGLITE_ONLY } from '../support/db.js';
import { type GitHubStandIn, type RepoHandle, startGitHubStandIn } from '../support/github/index.js';
import { freePort } from '../support/process.js';
import { unzipped } from '../support/zip.js';
import { eventually } from './support.js';

/**
 * Rail A end to end, against the GitHub stand-in (a real HTTP server speaking GitHub's REST API,
 * git smart HTTP and signed webhooks): a creator lists a private GitHub repository through the
 * App, a pushed tag's signed webhook cuts the release through the hosted rail's pipeline, the
 * official x402 client buys it, and every refusal the issue names is checked on the way.
 * On PGlite only: the statements it reaches (GitHub listings, signed deliveries, claims, a
 * purchase) run on both backends in github-repositories, github-source-state,
 * github-cut-refusals, sync and the purchase suites.
 */
describe.each(PGLITE_ONLY)('a GitHub-backed listing on %s', (backend) => {
  let gh: GitHubStandIn;
  let t: PaymentsTestApp;
  let base: string;
  let hookUrl: string;
  let alice: RegisteredCreator;
  let installationId: number;
  let repo: RepoHandle;
  let listingId: string;
  let owner: string;
  let slug: string;
  const logLines: string[] = [];
  const files: Record<string, string> = {
    'README.md': '# Notes\n\nTurns commits into release notes.\n',
    'src/notes.js': 'export function notes(log) {\n  return log.map((c) => "- " + c);\n}\n',
    'package.json': '{"name":"notes","version":"1.0.0","license":"MIT","dependencies":{}}\n',
  };

  beforeAll(async () => {
    gh = await startGitHubStandIn();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    hookUrl = `${base}/api/github/webhooks`;
    t = await createPaymentsApp({
      backend,
      jobs: [cutJob],
      env: {
        BASE_URL: base,
        LOG_LEVEL: 'debug',
        TREE_MAX_DEPTH: '6',
        GITHUB_APP_ID: String(gh.appId),
        GITHUB_APP_PRIVATE_KEY: gh.privateKeyPem,
        GITHUB_WEBHOOK_SECRET: gh.webhookSecret,
        GITHUB_API_URL: gh.apiUrl,
        GITHUB_GIT_ALLOW_HTTP: 'true',
      },
      logDestination: new Writable({
        write(chunk, _encoding, done) {
          logLines.push(String(chunk));
          done();
        },
      }),
    });
    await t.app.listen({ port, host: '127.0.0.1' });
    alice = await registerCreator(t);
    installationId = gh.createInstallation({ account: { login: 'acme', type: 'Organization' } }).id;
    gh.setUser('acme', { type: 'Organization', name: 'Acme Tools', bio: 'We make tools', followers: 12 });
    repo = await gh.createRepo({
      owner: 'acme',
      name: 'notes',
      installationId,
      description: 'Release notes from commits',
      topics: ['release', 'notes'],
      language: 'JavaScript',
    });
    // The creator proves the repository is theirs by naming their handle in it.
    files['.repo402'] = `${alice.handle}\n`;
    await gh.pushTag(repo, { tag: 'claim', files });
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await gh?.close();
  });

  const create = (payload: Record<string, unknown>) =>
    t.app.inject({ method: 'POST', url: '/api/listings', headers: bearer(alice.apiKey), payload });
  const sync = (payload: Record<string, unknown> = {}) =>
    t.app.inject({
      method: 'POST',
      url: `/api/listings/${listingId}/sync`,
      headers: bearer(alice.apiKey),
      payload,
    });
  const judged = (version: string) =>
    eventually(async () => {
      const row = await findRelease(t.ctx.database.db, listingId, version);
      return row && row.verdict !== 'pending' ? row : undefined;
    }, 90_000);
  const listing = async () =>
    (await t.app.inject({ url: `/api/listings/${listingId}`, headers: bearer(alice.apiKey) })).json();

  it('refuses a public repository, one the installation does not reach, and an ambiguous name', async () => {
    const open = await gh.createRepo({ owner: 'acme', name: 'open', private: false, installationId });
    await gh.pushTag(open, { tag: 'claim', files: { '.repo402': `${alice.handle}\n` } });
    expectError(
      await create({ source: 'github', slug: 'open', installation_id: installationId, repo: open.fullName }),
      422,
      'public_repo',
    );
    const other = gh.createInstallation({ account: { login: 'bob' } }).id;
    const hidden = await gh.createRepo({ owner: 'bob', name: 'secret', installationId: other });
    expectError(
      await create({
        source: 'github',
        slug: 'secret',
        installation_id: installationId,
        github_repo_id: hidden.id,
      }),
      404,
      'not_found',
    );
    expectError(
      await create({
        source: 'github',
        slug: 'x',
        installation_id: installationId,
        repo: repo.fullName,
        github_repo_id: repo.id,
      }),
      400,
      'invalid_request',
    );
    expectError(
      await create({ source: 'github', slug: 'xyz', installation_id: 999_999, repo: repo.fullName }),
      404,
      'not_found',
    );
  });

  it('refuses a repository that does not name the creator, even through the right installation', async () => {
    // An installation id is visible in GitHub's URLs: reaching the repository is not owning it.
    const mallory = await registerCreator(t);
    const stolen = await t.app.inject({
      method: 'POST',
      url: '/api/listings',
      headers: bearer(mallory.apiKey),
      payload: { source: 'github', slug: 'notes', installation_id: installationId, github_repo_id: repo.id },
    });
    expectError(stolen, 404, 'not_found');
    expect(stolen.json().message).toContain('.repo402');
    const unclaimed = await gh.createRepo({ owner: 'acme', name: 'unclaimed', installationId });
    await gh.pushTag(unclaimed, { tag: 'claim', files: { 'README.md': 'no claim\n' } });
    expectError(
      await create({
        source: 'github',
        slug: 'unclaimed',
        installation_id: installationId,
        repo: unclaimed.fullName,
      }),
      404,
      'not_found',
    );
  });

  it('lists a private repository once, by id or name', async () => {
    const created = await create({
      source: 'github',
      slug: 'notes',
      installation_id: installationId,
      repo: repo.fullName,
      price_micro: '3000000',
      description: 'Release notes from commits',
      trigger_hint: 'When you cut a release',
    });
    expect(created.statusCode, created.body).toBe(201);
    const body = created.json();
    ({ id: listingId, owner, slug } = body);
    expect(body).toMatchObject({
      source: 'github',
      status: 'draft',
      github: {
        installation_id: installationId,
        repo_id: repo.id,
        repo: 'acme/notes',
        state: 'ok',
        reason: null,
      },
    });
    expect(body.remote).toBeUndefined();
    const again = await create({
      source: 'github',
      slug: 'notes-2',
      installation_id: installationId,
      github_repo_id: repo.id,
    });
    expectError(again, 400, 'invalid_request');
    expect(again.json().details.issues[0].reason).toContain('already backs a live listing');
  });

  it('cuts a pushed tag from its signed webhook, once, whatever GitHub redelivers', async () => {
    const pushed = await gh.pushTag(repo, {
      tag: 'v1.0.0',
      files,
      annotated: 'First release',
      webhookUrl: hookUrl,
    });
    expect(pushed.deliveries.map((delivery) => delivery.status)).toEqual([200, 200]);
    const release = await judged('1.0.0');
    expect(release).toMatchObject({ verdict: 'pass', commitSha: pushed.commit, changelog: 'First release' });
    // A redelivery of either event changes nothing.
    for (const delivery of pushed.deliveries) {
      const again = await gh.deliver(hookUrl, delivery.event, delivery.payload, {
        deliveryId: delivery.deliveryId,
      });
      expect(again.status).toBe(200);
      expect(JSON.parse(again.body)).toEqual({
        handled: false,
        duplicate: true,
        duplicate_of: delivery.deliveryId,
      });
    }
    const { rows } = await t.database.query<{ n: string }>(
      'select count(*)::text as n from release_cuts where listing_id = $1',
      [listingId],
    );
    expect(rows[0]!.n).toBe('1');
  });

  it('answers a signed delivery re-sent under a fresh delivery id as the repeat it is, for the replay window', async () => {
    const pushed = await gh.pushTag(repo, {
      tag: 'v0.9.0',
      files: { ...files, 'OLD.md': 'old\n' },
      webhookUrl: hookUrl,
    });
    expect(pushed.deliveries.map((delivery) => delivery.status)).toEqual([200, 200]);
    await judged('0.9.0');
    const cuts = async () =>
      (
        await t.database.query<{ n: string }>(
          'select count(*)::text as n from release_cuts where listing_id = $1',
          [listingId],
        )
      ).rows[0]!.n;
    const before = await cuts();
    // GitHub signs no timestamp: whoever captured a delivery holds a valid signature for its body.
    for (const delivery of pushed.deliveries) {
      const replayed = await gh.deliver(hookUrl, delivery.event, delivery.payload, {
        deliveryId: randomUUID(),
      });
      expect(replayed.status).toBe(200);
      expect(JSON.parse(replayed.body)).toEqual({
        handled: false,
        duplicate: true,
        duplicate_of: delivery.deliveryId,
      });
    }
    // The same event name with another body is new.
    const other = await gh.deliver(hookUrl, 'push', {
      ...(pushed.deliveries[1]!.payload as object),
      zen: 'x',
    });
    expect(JSON.parse(other.body).duplicate).toBeUndefined();
    // Past the window the body is read again: what it asks for is done already, so nothing changes.
    const now = t.clock.now();
    t.clock.advance(REPLAY_WINDOW_MS + 1000);
    try {
      const late = await gh.deliver(hookUrl, pushed.deliveries[0]!.event, pushed.deliveries[0]!.payload);
      expect(JSON.parse(late.body)).toEqual({ handled: false });
    } finally {
      t.clock.set(now);
    }
    expect(await cuts()).toBe(before);
  });

  it('refuses forged and unsigned deliveries, cutting nothing', async () => {
    const pushed = await gh.pushTag(repo, { tag: 'v1.1.0', files: { ...files, 'CHANGES.md': 'more\n' } });
    const payload = await gh.payloads.tagPush(repo, 'v1.1.0', pushed.commit);
    for (const signature of ['wrong', 'missing'] as const) {
      const forged = await gh.deliver(hookUrl, 'push', payload, { signature });
      expect(forged.status).toBe(401);
      expect(JSON.parse(forged.body).code).toBe('invalid_signature');
    }
    const otherSecret = await gh.deliver(hookUrl, 'push', payload, { secret: 'not-the-apps-secret-at-all' });
    expect(otherSecret.status).toBe(401);
    expect(await findRelease(t.ctx.database.db, listingId, '1.1.0')).toBeUndefined();
    expect(logLines.some((line) => line.includes('bad or missing signature'))).toBe(true);
    // Sync is the recovery path for a dropped webhook: it cuts the newest uncut tag.
    const synced = await sync();
    expect(synced.statusCode, synced.body).toBe(202);
    expect(synced.json()).toMatchObject({ version: '1.1.0', commit_sha: pushed.commit });
    expect((await judged('1.1.0')).verdict).toBe('pass');
  });

  it('refuses a tree over the limits before answering 202, and claims nothing', async () => {
    const deep = 'a/b/c/d/e/f/g/h/deep.txt';
    await gh.pushTag(repo, { tag: 'v1.2.0', files: { ...files, [deep]: 'deep\n' } });
    expectError(await sync({ version: '1.2.0' }), 413, 'repo_too_large');
    // A body-less sync takes the newest tag not cut, this one, again: the answer names the version,
    // so the creator knows to give another ref or version.
    const newest = await sync();
    expectError(newest, 413, 'repo_too_large');
    expect(newest.json().message).toContain('v1.2.0');
    expect(newest.json().details).toMatchObject({ version: '1.2.0', limit: 'depth' });
    const { rows } = await t.database.query(
      'select 1 from release_cuts where listing_id = $1 and version = $2',
      [listingId, '1.2.0'],
    );
    expect(rows).toEqual([]);
  });

  it('records a webhook-delivered tag over the limits as a failing release, fetching nothing', async () => {
    const deep = 'a/b/c/d/e/f/g/h/deep.txt';
    const pushed = await gh.pushTag(repo, {
      tag: 'v1.2.1',
      files: { ...files, [deep]: 'deep\n' },
      webhookUrl: hookUrl,
    });
    expect(pushed.deliveries.map((delivery) => delivery.status)).toEqual([200, 200]);
    const release = await judged('1.2.1');
    expect(release).toMatchObject({ verdict: 'fail', commitSha: pushed.commit, artifactKey: null });
    expect((release.scan as { findings: unknown[] }).findings).toEqual([
      expect.objectContaining({ check: 'limits', rule_id: 'path-depth', tier: 'blocking' }),
    ]);
    const { rows } = await t.database.query<{ state: string }>(
      'select state from release_cuts where listing_id = $1 and version = $2',
      [listingId, '1.2.1'],
    );
    expect(rows).toEqual([{ state: 'refused' }]);
    // The refused tree was never fetched into the mirror.
    const mirror = repoPath(t.ctx.config, owner, slug);
    expect(await resolveCommit(mirror, pushed.commit)).toBeUndefined();
  });

  it('publishes with repo_meta and owner from GitHub, and sells the tagged tree to the official client', async () => {
    const publish = await t.app.inject({
      method: 'POST',
      url: `/api/listings/${listingId}/publish`,
      headers: bearer(alice.apiKey),
    });
    expect(publish.statusCode, publish.body).toBe(200);
    const manifest = (await t.app.inject({ url: `/api/label/${owner}/${slug}` })).json();
    expect(manifest.version).toBe('1.1.0');
    expect(manifest.computed.repo_meta).toMatchObject({
      repo_id: repo.id,
      full_name: 'acme/notes',
      description: 'Release notes from commits',
      topics: ['release', 'notes'],
      language: 'JavaScript',
      private: true,
      default_branch: 'main',
    });
    expect(manifest.computed.owner).toMatchObject({
      login: 'acme',
      name: 'Acme Tools',
      bio: 'We make tools',
      followers: 12,
    });

    // The server's clock is the manual one, set to the real time when the app was made; the x402
    // client signs with the real clock, and the server allows it 60 s of skew. On a loaded machine
    // this file may take longer than that to get here.
    t.clock.set(new Date());
    const buyer = await fundedWallet(t, 10_000_000n);
    const client = new x402Client()
      .register('eip155:*', new ExactEvmScheme(buyer))
      .setSpendControls({ maxAmountPerPayment: '$5' } as never);
    const response = await wrapFetchWithPayment(fetch, client)(`${base}/api/r/${owner}/${slug}`);
    expect(response.status, await response.clone().text()).toBe(200);
    const grant = (await response.json()) as { download_url: string; artifact_sha256: string };
    expect(grant.artifact_sha256).toBe(manifest.artifact_sha256);
    const zip = Buffer.from(await (await fetch(grant.download_url)).arrayBuffer());
    expect(createHash('sha256').update(zip).digest('hex')).toBe(manifest.artifact_sha256);
    const dir = await unzipped(zip);
    for (const [name, content] of Object.entries({ ...files, 'CHANGES.md': 'more\n' })) {
      expect(await readFile(path.join(dir, slug, name), 'utf8')).toBe(content);
    }
    buyerWallet = buyer;
  });
  let buyerWallet: Awaited<ReturnType<typeof fundedWallet>>;

  it('reports a released tag moved or deleted on GitHub, and keeps the release as it was cut', async () => {
    const before = await findRelease(t.ctx.database.db, listingId, '1.0.0');
    const moved = await gh.moveTag(repo, 'v1.0.0', { 'README.md': 'rewritten\n' }, { webhookUrl: hookUrl });
    expect(moved.deliveries.every((delivery) => delivery.status === 200)).toBe(true);
    await gh.deleteTag(repo, 'v1.1.0', { webhookUrl: hookUrl });
    const after = await findRelease(t.ctx.database.db, listingId, '1.0.0');
    expect(after).toMatchObject({ commitSha: before!.commitSha, artifactSha256: before!.artifactSha256 });
    const { github } = await listing();
    expect(github.tag_changes).toHaveLength(2);
    expect(github.tag_changes).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ tag: 'v1.1.0', commit_sha: null }),
        expect.objectContaining({
          tag: 'v1.0.0',
          released_commit_sha: before!.commitSha,
          commit_sha: moved.commit,
        }),
      ]),
    );
    const log = (await t.app.inject({ url: `/api/v/${owner}/${slug}/releases` })).json();
    expect(log.releases.find((r: { version: string }) => r.version === '1.0.0').commit_sha).toBe(
      before!.commitSha,
    );
  });

  it('ignores v* tags that are not release tags, created or deleted, as the hosted rail refuses them', async () => {
    const cutsBefore = await t.database.query<{ version: string }>(
      'select version from release_cuts where listing_id = $1 order by version',
      [listingId],
    );
    for (const tag of ['v1.2', 'v1.4.0-beta']) {
      const pushed = await gh.pushTag(repo, { tag, files, webhookUrl: hookUrl });
      const deleted = await gh.deleteTag(repo, tag, { webhookUrl: hookUrl });
      for (const delivery of [...pushed.deliveries, ...deleted]) {
        expect(delivery.status).toBe(200);
        expect(JSON.parse(delivery.body)).toEqual({ handled: false });
      }
    }
    const cutsAfter = await t.database.query<{ version: string }>(
      'select version from release_cuts where listing_id = $1 order by version',
      [listingId],
    );
    expect(cutsAfter.rows).toEqual(cutsBefore.rows);
    expect((await listing()).github.tag_changes).toHaveLength(2);
  });

  it("sends octokit's own log lines to the structured log, with what they say as fields", async () => {
    // Octokit's default logger is the console (bound when octokit is loaded, so a spy on the console
    // cannot see it): a line of octokit's in the structured log is one that did not go there.
    const from = logLines.length;
    // GitHub answers 404 for a repository the installation does not see.
    expectError(
      await create({ source: 'github', slug: 'nowhere', installation_id: installationId, github_repo_id: 1 }),
      404,
      'not_found',
    );
    expect((await sync({ version: '1.0.0' })).statusCode).toBe(409);
    const lines = logLines.slice(from).map((line) => JSON.parse(line) as Record<string, unknown>);
    const octokit = lines.filter((line) => line.source === 'octokit');
    expect(octokit).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ method: 'GET', path: '/repositories/1', status: 404 }),
        expect.objectContaining({ method: 'GET', path: `/repositories/${repo.id}`, status: 200 }),
      ]),
    );
    for (const line of octokit) {
      expect(line.msg).toEqual(expect.any(String));
      // A request's options (headers, credentials) are never logged.
      expect(Object.keys(line)).not.toContain('headers');
    }
    // Should a line of octokit's ever carry a token, it is masked.
    const token = gh.tokensIssued[0]!;
    expect(maskTokens(`GET /x?access_token=${token}&a=1 - 200 ${token} eyJa.eyJb.c1`)).toBe(
      'GET /x?access_token=***&a=1 - 200 *** ***',
    );
  });

  it('after the App is uninstalled: sync says why, holders still re-fetch what they own', async () => {
    const deliveries = await gh.uninstall(installationId, { webhookUrl: hookUrl });
    expect(deliveries.map((delivery) => delivery.status)).toEqual([200]);
    expect((await listing()).github).toMatchObject({
      state: 'unreachable',
      reason: 'the GitHub App was uninstalled',
    });
    const refused = await sync();
    expectError(refused, 404, 'not_found');
    expect(refused.json().details).toEqual({ source_state: 'unreachable' });
    // The holder's re-fetch is free and still works: what was cut is stored, not fetched again.
    const client = new x402Client()
      .register('eip155:*', new ExactEvmScheme(buyerWallet))
      .setSpendControls({ maxAmountPerPayment: '$5' } as never);
    const again = await wrapFetchWithPayment(fetch, client)(`${base}/api/r/${owner}/${slug}`);
    expect(again.status, await again.clone().text()).toBe(200);
    const zip = Buffer.from(
      await (await fetch(((await again.json()) as { download_url: string }).download_url)).arrayBuffer(),
    );
    expect(zip.length).toBeGreaterThan(0);
  });

  it('never logs an installation token', () => {
    expect(gh.tokensIssued.length).toBeGreaterThan(0);
    const logged = logLines.join('');
    expect(logged.length).toBeGreaterThan(0);
    for (const token of gh.tokensIssued) expect(logged).not.toContain(token);
  });
});
