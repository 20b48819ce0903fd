import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCut } from '../../src/releases/cut/run.js';
import { findCut, findRelease } from '../../src/releases/store.js';
import { bearer, expectError, type RegisteredCreator, registerCreator } from '../identity/support.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { BACKENDS } from '../support/db.js';
import { type GitHubStandIn, type RepoHandle, startGitHubStandIn } from '../support/github/index.js';
import { freePort } from '../support/process.js';
import { testInspector } from './support.js';

/**
 * A GitHub cut that its source refuses when the job runs (the App uninstalled, the installation
 * refusing a call halfway) fails at once with the reason, and gives its version back: nothing was
 * released or sold, so once the source is reachable again the version can be cut. A version that
 * has a release is never cut again. No workers run: the test drives `runCut` as a worker would.
 */
describe.each(BACKENDS)('a GitHub cut refused by its source on %s', (backend) => {
  let gh: GitHubStandIn;
  let t: TestApp;
  let hookUrl: string;
  let alice: RegisteredCreator;
  let installationId: number;
  let repo: RepoHandle;
  let listingId: string;
  const logLines: string[] = [];
  const files = { 'README.md': '# Tool\n', 'src/tool.js': 'export const tool = 1;\n' };

  beforeAll(async () => {
    gh = await startGitHubStandIn();
    const port = await freePort();
    hookUrl = `http://127.0.0.1:${port}/api/github/webhooks`;
    t = await createTestApp({
      backend,
      env: {
        BASE_URL: `http://127.0.0.1:${port}`,
        LOG_LEVEL: 'debug',
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
    t.ctx.inspectRelease = testInspector();
    await t.app.listen({ port, host: '127.0.0.1' });
    alice = await registerCreator(t);
    installationId = gh.createInstallation({ account: { login: 'acme' } }).id;
    repo = await gh.createRepo({ owner: 'acme', name: 'tool', installationId });
    await gh.pushTag(repo, { tag: 'v1.0.0', files: { ...files, '.repo402': `${alice.handle}\n` } });
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/listings',
      headers: bearer(alice.apiKey),
      payload: { source: 'github', slug: 'tool', installation_id: installationId, github_repo_id: repo.id },
    });
    expect(created.statusCode, created.body).toBe(201);
    listingId = created.json().id;
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await gh?.close();
  });

  const sync = (payload: Record<string, unknown> = {}) =>
    t.app.inject({
      method: 'POST',
      url: `/api/listings/${listingId}/sync`,
      headers: bearer(alice.apiKey),
      payload,
    });
  const listing = async () =>
    (await t.app.inject({ url: `/api/listings/${listingId}`, headers: bearer(alice.apiKey) })).json();
  const cutsOf = async (version: string) =>
    (
      await t.database.query<{ id: string; state: string }>(
        'select id, state from release_cuts where listing_id = $1 and version = $2',
        [listingId, version],
      )
    ).rows;
  /** Installs the App afresh on acme with the repository, as GitHub announces it. */
  async function reinstall(): Promise<void> {
    const fresh = gh.createInstallation({ account: { login: 'acme' } }).id;
    await gh.addRepoToInstallation(repo, fresh);
    const created = await gh.deliver(hookUrl, 'installation', {
      ...gh.payloads.installation('unsuspend', fresh),
      action: 'created',
      repositories: [{ id: repo.id, name: repo.name, full_name: repo.fullName, private: true }],
    });
    expect(created.status, created.body).toBe(200);
    installationId = fresh;
    expect((await listing()).github).toMatchObject({ state: 'ok', installation_id: fresh });
  }

  it('uninstalled before the job ran: the cut fails without retries and 1.0.0 is cut after a reinstall', async () => {
    const queued = await sync();
    expect(queued.statusCode, queued.body).toBe(202);
    const [claim] = await cutsOf('1.0.0');
    await gh.uninstall(installationId, { webhookUrl: hookUrl });
    // Not the final attempt: a retried error would throw here.
    await runCut(t.ctx, claim!.id, { finalAttempt: false });
    const failed = await findCut(t.ctx.database.db, claim!.id);
    expect(failed).toMatchObject({ state: 'failed' });
    expect(failed!.failureReason).toMatch(
      /^not_found: No new release can be cut from acme\/tool: the GitHub App was uninstalled\. Install the GitHub App on the repository again/,
    );
    expect(await findRelease(t.ctx.database.db, listingId, '1.0.0')).toBeUndefined();
    expect((await listing()).cuts).toEqual([
      expect.objectContaining({ version: '1.0.0', state: 'failed', failure_reason: failed!.failureReason }),
    ]);

    await reinstall();
    const again = await sync();
    expect(again.statusCode, again.body).toBe(202);
    expect(again.json()).toMatchObject({ version: '1.0.0', state: 'queued' });
    // Still one claim of 1.0.0: the failed one was taken again.
    const claims = await cutsOf('1.0.0');
    expect(claims).toEqual([{ id: claim!.id, state: 'queued' }]);
    expect((await listing()).cuts).toEqual([expect.objectContaining({ version: '1.0.0', state: 'queued' })]);
    await runCut(t.ctx, claim!.id, { finalAttempt: false });
    expect(await findRelease(t.ctx.database.db, listingId, '1.0.0')).toMatchObject({ verdict: 'pass' });
    expect((await listing()).cuts).toEqual([]);
    // A version with a release is never cut again, by any body.
    expectError(await sync({ version: '1.0.0' }), 409, 'version_exists');
    expectError(await sync(), 409, 'version_exists');
  });

  it('two syncs racing for a version given back: one claims it, the other is 409', async () => {
    await gh.pushTag(repo, { tag: 'v1.1.0', files: { ...files, 'CHANGES.md': 'more\n' } });
    expect((await sync()).statusCode).toBe(202);
    const [claim] = await cutsOf('1.1.0');
    await gh.uninstall(installationId, { webhookUrl: hookUrl });
    await runCut(t.ctx, claim!.id, { finalAttempt: false });
    expect((await findCut(t.ctx.database.db, claim!.id))?.state).toBe('failed');
    await reinstall();
    const answers = await Promise.all([sync(), sync({ version: '1.1.0' }), sync()]);
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([202, 409, 409]);
    for (const answer of answers.filter((a) => a.statusCode === 409)) {
      expect(answer.json().code).toBe('version_exists');
    }
    expect(await cutsOf('1.1.0')).toEqual([{ id: claim!.id, state: 'queued' }]);
    await runCut(t.ctx, claim!.id, { finalAttempt: false });
    expect(await findRelease(t.ctx.database.db, listingId, '1.1.0')).toMatchObject({ verdict: 'pass' });
  });

  it('refused halfway through the job (the installation suspended after the first call): a clear failure, no retry, no stack', async () => {
    await gh.pushTag(repo, { tag: 'v1.3.0', files: { ...files, 'CHANGES.md': 'later\n' } });
    expect((await sync()).statusCode).toBe(202);
    const [claim] = await cutsOf('1.3.0');
    // GitHub answers the job's first call (the repository), then the installation is suspended:
    // the size check through the API is refused.
    const client = t.ctx.github!;
    const commit = client.commit.bind(client);
    client.commit = async (...args) => {
      await gh.suspendInstallation(installationId);
      client.commit = commit;
      return commit(...args);
    };
    const logged = logLines.length;
    // Not the final attempt: an error left for a retry would throw here.
    await runCut(t.ctx, claim!.id, { finalAttempt: false });
    client.commit = commit;
    const failed = await findCut(t.ctx.database.db, claim!.id);
    expect(failed).toMatchObject({ state: 'failed' });
    expect(failed!.failureReason).toMatch(/^not_found: No new release can be cut from acme\/tool: /);
    expect((await listing()).github).toMatchObject({ state: 'unreachable' });
    const lines = logLines.slice(logged).join('');
    expect(lines).not.toContain('release cut failed for good');
    expect(lines).not.toContain('"stack"');
    // Unsuspended: the version was given back, so sync cuts it.
    await gh.unsuspendInstallation(installationId, { webhookUrl: hookUrl });
    const again = await sync({ version: '1.3.0' });
    expect(again.statusCode, again.body).toBe(202);
    await runCut(t.ctx, claim!.id, { finalAttempt: false });
    expect(await findRelease(t.ctx.database.db, listingId, '1.3.0')).toMatchObject({ verdict: 'pass' });
  });

  it('refused while the release is inspected: the release is inspected without hosting metadata', async () => {
    await gh.pushTag(repo, { tag: 'v1.4.0', files: { ...files, 'CHANGES.md': 'latest\n' } });
    expect((await sync()).statusCode).toBe(202);
    const [claim] = await cutsOf('1.4.0');
    // The release is recorded, then GitHub refuses the owner's profile for its manifest.
    const client = t.ctx.github!;
    const owner = client.owner.bind(client);
    let hosting: unknown = 'not inspected';
    t.ctx.inspectRelease = async (input) => {
      hosting = input.hosting;
      return testInspector()(input);
    };
    client.owner = async (...args) => {
      await gh.suspendInstallation(installationId);
      client.owner = owner;
      return owner(...args);
    };
    try {
      await runCut(t.ctx, claim!.id, { finalAttempt: false });
    } finally {
      client.owner = owner;
      t.ctx.inspectRelease = testInspector();
    }
    expect(await findRelease(t.ctx.database.db, listingId, '1.4.0')).toMatchObject({ verdict: 'pass' });
    expect(hosting).toBeUndefined();
    expect((await listing()).github).toMatchObject({ state: 'unreachable' });
    await gh.unsuspendInstallation(installationId, { webhookUrl: hookUrl });
  });

  it('a webhook tag event claims a version given back, as sync does', async () => {
    await gh.pushTag(repo, { tag: 'v1.2.0', files: { ...files, 'CHANGES.md': 'even more\n' } });
    expect((await sync()).statusCode).toBe(202);
    const [claim] = await cutsOf('1.2.0');
    await gh.uninstall(installationId, { webhookUrl: hookUrl });
    await runCut(t.ctx, claim!.id, { finalAttempt: false });
    await reinstall();
    // GitHub redelivers the tag's events (from the App's settings): the version is claimed again.
    const commit = (await gh.payloads.tagCreate(repo, 'v1.2.0')) as unknown as Record<string, unknown>;
    const delivered = await gh.deliver(hookUrl, 'create', commit);
    expect(JSON.parse(delivered.body)).toEqual({ handled: true });
    expect(await cutsOf('1.2.0')).toEqual([{ id: claim!.id, state: 'queued' }]);
    await runCut(t.ctx, claim!.id, { finalAttempt: false });
    expect(await findRelease(t.ctx.database.db, listingId, '1.2.0')).toMatchObject({ verdict: 'pass' });
  });
});
