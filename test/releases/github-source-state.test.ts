import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, expectError, type RegisteredCreator, registerCreator } from '../identity/support.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { type GitHubStandIn, type RepoHandle, startGitHubStandIn } from '../support/github/index.js';
import { freePort } from '../support/process.js';

/**
 * What a GitHub listing's source may become after it was listed: public, removed from the App,
 * suspended. Each is recorded on the listing with the reason, sync refuses with the spec's error,
 * and the listing recovers when the creator fixes it. Without a configured App, the rail is off.
 */
describe('the source of a GitHub listing', () => {
  let gh: GitHubStandIn;
  let t: TestApp;
  let hookUrl: string;
  let alice: RegisteredCreator;
  let installationId: number;
  let repo: RepoHandle;
  let listingId: string;

  beforeAll(async () => {
    gh = await startGitHubStandIn();
    const port = await freePort();
    hookUrl = `http://127.0.0.1:${port}/api/github/webhooks`;
    t = await createTestApp({
      env: {
        BASE_URL: `http://127.0.0.1:${port}`,
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
    await gh.removeRepoFromInstallation(repo, { webhookUrl: hookUrl });
    expect(await source()).toMatchObject({
      state: 'unreachable',
      reason: 'the repository was removed from the GitHub App installation',
    });
    expectError(await sync(), 404, 'not_found');
    await gh.addRepoToInstallation(repo, installationId, { webhookUrl: hookUrl });
    expect(await source()).toMatchObject({ state: 'ok' });
  });

  it('suspended and unsuspended', async () => {
    await gh.suspendInstallation(installationId, { webhookUrl: hookUrl });
    expect(await source()).toMatchObject({
      state: 'unreachable',
      reason: 'the GitHub App installation was suspended',
    });
    const refused = await sync();
    expectError(refused, 404, 'not_found');
    expect(refused.json().message).toContain('Install the GitHub App on the repository again');
    await gh.unsuspendInstallation(installationId, { webhookUrl: hookUrl });
    expect(await source()).toMatchObject({ state: 'ok' });
  });

  it('uninstalled, then installed again: the new installation takes the listing over', async () => {
    await gh.uninstall(installationId, { webhookUrl: hookUrl });
    expect(await source()).toMatchObject({ state: 'unreachable', reason: 'the GitHub App was uninstalled' });
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
    expect(JSON.parse(again.body)).toEqual({ handled: false, duplicate: true });
    await gh.unsuspendInstallation(installationId, { webhookUrl: hookUrl });
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
