import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, expectError, type RegisteredCreator, registerCreator } from '../identity/support.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { BACKENDS } from '../support/db.js';
import { type GitHubStandIn, type RepoHandle, startGitHubStandIn } from '../support/github/index.js';
import { freePort } from '../support/process.js';

/**
 * What a GitHub listing's source may become after it was listed: public, removed from the App,
 * suspended. Each is recorded on the listing with the reason, sync refuses with the spec's error,
 * and the listing recovers when the creator fixes it. Without a configured App, the rail is off.
 */
describe.each(BACKENDS)('the source of a GitHub listing on %s', (backend) => {
  let gh: GitHubStandIn;
  let t: TestApp;
  let hookUrl: string;
  let alice: RegisteredCreator;
  let installationId: number;
  let repo: RepoHandle;
  let listingId: string;
  const logLines: string[] = [];

  beforeAll(async () => {
    gh = await startGitHubStandIn();
    const port = await freePort();
    hookUrl = `http://127.0.0.1:${port}/api/github/webhooks`;
    t = await createTestApp({
      backend,
      logDestination: new Writable({
        write(chunk, _encoding, done) {
          logLines.push(String(chunk));
          done();
        },
      }),
      env: {
        BASE_URL: `http://127.0.0.1:${port}`,
        LOG_LEVEL: 'info',
        GITHUB_APP_ID: String(gh.appId),
        GITHUB_APP_PRIVATE_KEY: gh.privateKeyPem,
        GITHUB_WEBHOOK_SECRET: gh.webhookSecret,
        GITHUB_API_URL: gh.apiUrl,
        GITHUB_GIT_ALLOW_HTTP: 'true',
      },
    });
    await t.app.listen({ port, host: '127.0.0.1' });
    alice = await registerCreator(t);
    installationId = gh.createInstallation({ account: { login: 'acme' } }).id;
    repo = await gh.createRepo({ owner: 'acme', name: 'tool', installationId });
    await gh.pushTag(repo, {
      tag: 'v1.0.0',
      files: { 'README.md': '# Tool\n', '.repo402': `${alice.handle}\n` },
    });
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/listings',
      headers: bearer(alice.apiKey),
      payload: { source: 'github', slug: 'tool', installation_id: installationId, github_repo_id: repo.id },
    });
    expect(created.statusCode, created.body).toBe(201);
    listingId = created.json().id;
  });
  afterAll(async () => {
    await t?.close();
    await gh?.close();
  });

  const sync = () =>
    t.app.inject({
      method: 'POST',
      url: `/api/listings/${listingId}/sync`,
      headers: bearer(alice.apiKey),
      payload: {},
    });
  const source = async () =>
    (await t.app.inject({ url: `/api/listings/${listingId}`, headers: bearer(alice.apiKey) })).json().github;
  /** The source state changes logged for the listing since `from` (an index into the log). */
  const changesLogged = (from: number) =>
    logLines
      .slice(from)
      .map((line) => JSON.parse(line) as { msg: string; listingId?: string; state?: string })
      .filter((line) => line.msg === 'listing source state changed' && line.listingId === listingId)
      .map((line) => line.state);
  /** Sync refused while unreachable: the message says what to do, the precise reason is kept. */
  async function refusedKeepingReason(reason: string, remedy: string) {
    const before = await source();
    expect(before).toMatchObject({ state: 'unreachable', reason });
    const from = logLines.length;
    const refused = await sync();
    expectError(refused, 404, 'not_found');
    expect(refused.json().message).toContain(reason);
    expect(refused.json().message).toContain(remedy);
    expect(await source()).toEqual(before);
    expect(changesLogged(from)).toEqual([]);
    return refused.json().message as string;
  }

  it('made public: sync refuses with public_repo and the listing says why; private again, it syncs', async () => {
    gh.setPrivate(repo, false);
    expectError(await sync(), 422, 'public_repo');
    expect(await source()).toMatchObject({
      state: 'public',
      reason: expect.stringContaining('acme/tool is public'),
    });
    gh.setPrivate(repo, true);
    const synced = await sync();
    expect(synced.statusCode, synced.body).toBe(202);
    expect(await source()).toMatchObject({ state: 'ok', reason: null });
  });

  it('removed from the installation and added back', async () => {
    const from = logLines.length;
    await gh.removeRepoFromInstallation(repo, { webhookUrl: hookUrl });
    const message = await refusedKeepingReason(
      'the repository was removed from the GitHub App installation',
      'Add the repository back to the GitHub App installation',
    );
    expect(message).not.toContain('Install the GitHub App');
    await gh.addRepoToInstallation(repo, installationId, { webhookUrl: hookUrl });
    expect(await source()).toMatchObject({ state: 'ok' });
    expect(changesLogged(from)).toEqual(['unreachable', 'ok']);
  });

  it('suspended and unsuspended', async () => {
    const from = logLines.length;
    await gh.suspendInstallation(installationId, { webhookUrl: hookUrl });
    // GitHub answers the suspended installation's calls with a 403 that could also mean a missing
    // permission; the webhook said exactly what happened, and that is what the creator reads.
    const message = await refusedKeepingReason(
      'the GitHub App installation was suspended',
      'Unsuspend the GitHub App installation',
    );
    expect(message).not.toContain('Install the GitHub App');
    await gh.unsuspendInstallation(installationId, { webhookUrl: hookUrl });
    expect(await source()).toMatchObject({ state: 'ok' });
    expect(changesLogged(from)).toEqual(['unreachable', 'ok']);
  });

  it('uninstalled, then installed again: the new installation takes the listing over', async () => {
    const from = logLines.length;
    await gh.suspendInstallation(installationId, { webhookUrl: hookUrl });
    // Suspended, then uninstalled: still unreachable (one change logged), and GitHub's newer event
    // is the reason the creator reads.
    await gh.uninstall(installationId, { webhookUrl: hookUrl });
    expect(changesLogged(from)).toEqual(['unreachable']);
    await refusedKeepingReason(
      'the GitHub App was uninstalled',
      'Install the GitHub App on the repository again',
    );
    const fresh = gh.createInstallation({ account: { login: 'acme' } }).id;
    await gh.addRepoToInstallation(repo, fresh);
    // GitHub announces a new installation with the repositories it was given.
    const created = await gh.deliver(hookUrl, 'installation', {
      ...gh.payloads.installation('unsuspend', fresh),
      action: 'created',
      repositories: [{ id: repo.id, name: repo.name, full_name: repo.fullName, private: true }],
    });
    expect(JSON.parse(created.body)).toEqual({ handled: true });
    expect(await source()).toMatchObject({ state: 'ok', installation_id: fresh });
    installationId = fresh;
    // Reachable again: sync gets as far as finding v1.0.0 cut already.
    expectError(await sync(), 409, 'version_exists');
  });

  it('another creator cannot sync it, and a redelivered installation event changes nothing twice', async () => {
    const bob = await registerCreator(t);
    const other = await t.app.inject({
      method: 'POST',
      url: `/api/listings/${listingId}/sync`,
      headers: bearer(bob.apiKey),
      payload: {},
    });
    expectError(other, 404, 'not_found');
    const [delivery] = await gh.suspendInstallation(installationId, { webhookUrl: hookUrl });
    const again = await gh.deliver(hookUrl, delivery!.event, delivery!.payload, {
      deliveryId: delivery!.deliveryId,
    });
    expect(JSON.parse(again.body)).toEqual({
      handled: false,
      duplicate: true,
      duplicate_of: delivery!.deliveryId,
    });
    await gh.unsuspendInstallation(installationId, { webhookUrl: hookUrl });
  });

  it('says a delivery was handled when it changed a listing’s source state, and only then', async () => {
    const other = await gh.createRepo({ owner: 'acme', name: 'other', installationId });
    await gh.pushTag(other, { tag: 'claim', files: { '.repo402': `${alice.handle}\n` } });
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/listings',
      headers: bearer(alice.apiKey),
      payload: { source: 'github', slug: 'other', installation_id: installationId, github_repo_id: other.id },
    });
    expect(created.statusCode, created.body).toBe(201);
    const state = async () =>
      (
        await t.app.inject({ url: `/api/listings/${created.json().id}`, headers: bearer(alice.apiKey) })
      ).json().github.state;
    const answers = (deliveries: Array<{ body: string }>) => deliveries.map(({ body }) => JSON.parse(body));

    // GitHub's `repository` event: made public, then private again.
    const [publicized] = await gh.changeVisibility(other, { private: false, webhookUrl: hookUrl });
    expect(JSON.parse(publicized!.body)).toEqual({ handled: true });
    expect(await state()).toBe('public');
    // The same delivery again under a new id is a repeat; the same news in another body (a later
    // event saying the same) changes nothing.
    const again = await gh.deliver(hookUrl, 'repository', publicized!.payload);
    expect(JSON.parse(again.body)).toEqual({
      handled: false,
      duplicate: true,
      duplicate_of: publicized!.deliveryId,
    });
    const sameNews = await gh.deliver(hookUrl, 'repository', laterCopy(publicized!.payload));
    expect(JSON.parse(sameNews.body)).toEqual({ handled: false });
    expect(answers(await gh.changeVisibility(other, { private: true, webhookUrl: hookUrl }))).toEqual([
      { handled: true },
    ]);
    expect(await state()).toBe('ok');

    // Made public with no event seen: the tag's `create` finds it so (handled), its `push` finds
    // nothing new to change.
    gh.setPrivate(other, false);
    const pushed = await gh.pushTag(other, { tag: 'v1.0.0', files: { 'a.txt': 'a\n' }, webhookUrl: hookUrl });
    expect(answers(pushed.deliveries)).toEqual([{ handled: true }, { handled: false }]);
    expect(await state()).toBe('public');
    expect(answers(await gh.changeVisibility(other, { private: true, webhookUrl: hookUrl }))).toEqual([
      { handled: true },
    ]);

    // Installation events: suspended (handled), the same news again (nothing changed), unsuspended.
    const [suspended] = await gh.suspendInstallation(installationId, { webhookUrl: hookUrl });
    expect(JSON.parse(suspended!.body)).toEqual({ handled: true });
    expect(
      JSON.parse((await gh.deliver(hookUrl, 'installation', laterCopy(suspended!.payload))).body),
    ).toEqual({ handled: false });
    expect(answers(await gh.unsuspendInstallation(installationId, { webhookUrl: hookUrl }))).toEqual([
      { handled: true },
    ]);
    expect(await state()).toBe('ok');
    expect(await source()).toMatchObject({ state: 'ok' });
  });

  it('unsuspending restores only what the suspension took: a repository removed meanwhile stays out of reach', async () => {
    const removedReason = 'the repository was removed from the GitHub App installation';
    await gh.removeRepoFromInstallation(repo, { webhookUrl: hookUrl });
    const [suspended] = await gh.suspendInstallation(installationId, { webhookUrl: hookUrl });
    // The repository's listing was unreachable already: nothing changed for it (the other listing
    // of the installation was suspended, so the delivery was handled).
    expect(JSON.parse(suspended!.body)).toEqual({ handled: true });
    expect(await source()).toMatchObject({ state: 'unreachable', reason: removedReason });
    await gh.unsuspendInstallation(installationId, { webhookUrl: hookUrl });
    expect(await source()).toMatchObject({ state: 'unreachable', reason: removedReason });
    await gh.addRepoToInstallation(repo, installationId, { webhookUrl: hookUrl });
    expect(await source()).toMatchObject({ state: 'ok', reason: null });
  });

  it('answers a signed delivery without X-GitHub-Event or X-GitHub-Delivery 400, naming the header', async () => {
    const payload = gh.payloads.installation('suspend', installationId);
    for (const header of ['x-github-event', 'x-github-delivery']) {
      const delivered = await gh.deliver(hookUrl, 'installation', payload, { omitHeaders: [header] });
      expect(delivered.status, delivered.body).toBe(400);
      const body = JSON.parse(delivered.body);
      expect(body).toMatchObject({
        code: 'invalid_request',
        message: expect.stringContaining(
          header === 'x-github-event' ? 'X-GitHub-Event' : 'X-GitHub-Delivery',
        ),
        docs_url: expect.stringContaining('#invalid_request'),
        details: { issues: [{ field: header, reason: expect.any(String) }] },
      });
    }
    // Without a signature it is the signature that is wrong, whatever else is missing.
    const unsigned = await gh.deliver(hookUrl, 'installation', payload, {
      omitHeaders: ['x-github-event'],
      signature: 'missing',
    });
    expect(unsigned.status).toBe(401);
    expect(JSON.parse(unsigned.body).code).toBe('invalid_signature');
    // None of them was handled: the installation is not marked suspended.
    expect(await source()).toMatchObject({ state: 'ok' });
  });
});

describe('without a GitHub App configured', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('refuses github listings with a clear 400 and answers webhooks 404', async () => {
    const alice = await registerCreator(t);
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/listings',
      headers: bearer(alice.apiKey),
      payload: { source: 'github', slug: 'tool', installation_id: 1, repo: 'acme/tool' },
    });
    expectError(created, 400, 'invalid_request');
    expect(created.json().message).toContain('need a GitHub App');
    const hook = await t.app.inject({
      method: 'POST',
      url: '/api/github/webhooks',
      headers: { 'content-type': 'application/json', 'x-github-event': 'ping', 'x-github-delivery': 'd1' },
      payload: '{}',
    });
    expectError(hook, 404, 'not_found');
  });
});

/**
 * The same news as `payload` in the body GitHub would send a second later: its repository's or
 * installation's `updated_at` one second on.
 */
function laterCopy(payload: unknown): unknown {
  const copy = structuredClone(payload) as Record<string, { updated_at?: string } | undefined>;
  for (const key of ['repository', 'installation']) {
    const entity = copy[key];
    if (entity?.updated_at) entity.updated_at = new Date(Date.parse(entity.updated_at) + 1000).toISOString();
  }
  return copy;
}
