import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { App } from '@octokit/app';
import type { components, operations } from '@octokit/openapi-types';
import type { components as webhookComponents } from '@octokit/openapi-webhooks-types';
import { Octokit } from '@octokit/rest';
import { Webhooks } from '@octokit/webhooks';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { type GitHubStandIn, type RepoHandle, startGitHubStandIn } from './index.js';
import type { Payloads } from './payloads.js';
import type * as shapes from './shapes.js';

type Rest = components['schemas'];
type Hook = webhookComponents['schemas'];

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const V1_FILES = {
  'README.md': '# widget\n',
  'src/index.js': 'export default 1;\n',
  'bin/run': '#!/bin/sh\n',
};
const ZERO_SHA = '0000000000000000000000000000000000000000';

let skewMs = 0;
let gh: GitHubStandIn;
let acme: number;
let mallory: number;
let widget: RepoHandle;
let many: RepoHandle;
let big: RepoHandle;
let v1: { commit: string; tree: string };
let v11: { commit: string; tree: string };
let scratch: string;

function appFor(standIn: GitHubStandIn) {
  return new App({
    appId: standIn.appId,
    privateKey: standIn.privateKeyPem,
    Octokit: Octokit.defaults({ baseUrl: standIn.apiUrl }),
    log: silent,
  });
}

async function installationToken(app: App, installationId: number): Promise<string> {
  const octokit = await app.getInstallationOctokit(installationId);
  return ((await octokit.auth({ type: 'installation' })) as { token: string }).token;
}

/** The way the rail runs git: the token only in a header, the header only in the environment. */
function gitClient(cwd: string, args: string[], token?: string) {
  const header = token && `Authorization: Basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`;
  const env = {
    PATH: process.env.PATH,
    HOME: '/nonexistent',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    GIT_ALLOW_PROTOCOL: 'http',
    ...(header
      ? { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'http.extraHeader', GIT_CONFIG_VALUE_0: header }
      : {}),
  };
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile('git', args, { cwd, env }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr });
    });
  });
}

async function bareRepo(): Promise<string> {
  const dir = await mkdtemp(path.join(scratch, 'client-'));
  expect((await gitClient(dir, ['init', '-q', '--bare'])).code).toBe(0);
  return dir;
}

function requestsSince(mark: number) {
  return gh.requests.slice(mark);
}

beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'repo402-standin-test-'));
  gh = await startGitHubStandIn({ truncateTreesAt: 5, now: () => Date.now() + skewMs });
  gh.setUser('acme', {
    type: 'Organization',
    name: 'Acme Inc',
    bio: 'Widgets',
    blog: 'https://acme.example',
  });
  acme = gh.createInstallation({ account: { login: 'acme', type: 'Organization' } }).id;
  mallory = gh.createInstallation({ account: { login: 'mallory' } }).id;
  widget = await gh.createRepo({
    owner: 'acme',
    name: 'widget',
    description: 'A widget',
    topics: ['widgets', 'cli'],
    language: 'JavaScript',
    license: 'MIT',
    stargazers_count: 42,
    installationId: acme,
  });
  v1 = await gh.pushTag(widget, { tag: 'v1.0.0', files: V1_FILES });
  v11 = await gh.pushTag(widget, {
    tag: 'v1.1.0',
    files: { ...V1_FILES, 'README.md': '# widget 1.1\n' },
    annotated: 'Release 1.1.0',
  });
  many = await gh.createRepo({ owner: 'acme', name: 'many', installationId: acme });
  for (let i = 0; i < 25; i++) await gh.pushTag(many, { tag: `v0.${i}.0`, files: { 'n.txt': `${i}\n` } });
  big = await gh.createRepo({ owner: 'acme', name: 'big', installationId: acme });
  await gh.pushTag(big, {
    tag: 'v1.0.0',
    files: Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`f${i}.txt`, `${i}\n`])),
  });
  await gh.createRepo({ owner: 'mallory', name: 'tool', installationId: mallory });
});

afterAll(async () => {
  await gh?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe('the shapes are the ones GitHub publishes', () => {
  it('types every builder with the OpenAPI and webhook schemas', () => {
    expectTypeOf<ReturnType<typeof shapes.fullRepository>>().toEqualTypeOf<Rest['full-repository']>();
    expectTypeOf<ReturnType<typeof shapes.repository>>().toEqualTypeOf<Rest['repository']>();
    expectTypeOf<ReturnType<typeof shapes.installationRepositories>>().toEqualTypeOf<
      operations['apps/list-repos-accessible-to-installation']['responses'][200]['content']['application/json']
    >();
    expectTypeOf<ReturnType<typeof shapes.app>>().toEqualTypeOf<NonNullable<Rest['integration']>>();
    expectTypeOf<ReturnType<typeof shapes.tag>>().toEqualTypeOf<Rest['tag']>();
    expectTypeOf<ReturnType<typeof shapes.gitTree>>().toEqualTypeOf<Rest['git-tree']>();
    expectTypeOf<ReturnType<typeof shapes.commit>>().toEqualTypeOf<Rest['commit']>();
    expectTypeOf<ReturnType<typeof shapes.publicUser>>().toEqualTypeOf<Rest['public-user']>();
    expectTypeOf<ReturnType<typeof shapes.installationToken>>().toEqualTypeOf<Rest['installation-token']>();
    expectTypeOf<ReturnType<typeof shapes.installation>>().toEqualTypeOf<Hook['installation']>();
    expectTypeOf<ReturnType<typeof shapes.installation>>().toExtend<Rest['installation']>();
    expectTypeOf<Awaited<ReturnType<Payloads['tagCreate']>>>().toEqualTypeOf<Hook['webhook-create']>();
    expectTypeOf<Awaited<ReturnType<Payloads['tagPush']>>>().toEqualTypeOf<Hook['webhook-push']>();
    expectTypeOf<Awaited<ReturnType<Payloads['tagDelete']>>>().toEqualTypeOf<Hook['webhook-push']>();
    expectTypeOf<Awaited<ReturnType<Payloads['repositoryVisibility']>>>().toEqualTypeOf<
      Hook['webhook-repository-publicized'] | Hook['webhook-repository-privatized']
    >();
    expectTypeOf<ReturnType<Payloads['installation']>>().toEqualTypeOf<
      | Hook['webhook-installation-deleted']
      | Hook['webhook-installation-suspend']
      | Hook['webhook-installation-unsuspend']
    >();
    expectTypeOf<ReturnType<Payloads['installationRepositories']>>().toEqualTypeOf<
      Hook['webhook-installation-repositories-added'] | Hook['webhook-installation-repositories-removed']
    >();
  });
});

describe('the REST API through @octokit/app and @octokit/rest', () => {
  it('issues an installation token for an App JWT on first use, and octokit caches it per App', async () => {
    const mark = gh.requests.length;
    const before = gh.tokenRequests;
    const app = appFor(gh);
    const octokit = await app.getInstallationOctokit(acme);
    expect(gh.tokenRequests).toBe(before);
    await octokit.rest.repos.get({ owner: 'acme', repo: 'widget' });
    expect(gh.tokenRequests).toBe(before + 1);
    expect(gh.tokensIssued.at(-1)).toMatch(/^ghs_[A-Za-z0-9]{36}$/);

    await (await app.getInstallationOctokit(acme)).rest.repos.get({ owner: 'acme', repo: 'widget' });
    expect(gh.tokenRequests).toBe(before + 1);
    await (await appFor(gh).getInstallationOctokit(acme)).rest.repos.get({ owner: 'acme', repo: 'widget' });
    expect(gh.tokenRequests).toBe(before + 2);

    const seen = requestsSince(mark).map((r) => `${r.method} ${r.path} ${r.authorization} ${r.status}`);
    expect(seen.slice(0, 2)).toEqual([
      `POST /api/v3/app/installations/${acme}/access_tokens jwt 201`,
      'GET /api/v3/repos/acme/widget token 200',
    ]);
  });

  it('answers the token request with the documented body', async () => {
    const { token } = (await appFor(gh).octokit.auth({ type: 'app' })) as { token: string };
    const response = await fetch(`${gh.apiUrl}/app/installations/${acme}/access_tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(response.status).toBe(201);
    const body = (await response.json()) as Rest['installation-token'];
    expect(body).toEqual({
      token: gh.tokensIssued.at(-1),
      expires_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      permissions: { contents: 'read', metadata: 'read' },
      repository_selection: 'selected',
    });
    const lifetime = Date.parse(body.expires_at) - Date.now();
    expect(lifetime).toBeGreaterThan(59 * 60_000);
    expect(lifetime).toBeLessThanOrEqual(60 * 60_000);
  });

  it('serves the App itself to its JWT, with its public page on the stand-in', async () => {
    const { data } = await appFor(gh).octokit.request('GET /app');
    expect(data).toMatchObject({
      id: gh.appId,
      slug: 'repo402-stand-in',
      html_url: `${gh.webUrl}/apps/repo402-stand-in`,
      owner: { login: 'repo402-operator', type: 'Organization' },
      permissions: { contents: 'read', metadata: 'read' },
      installations_count: 2,
    });
    const token = await installationToken(appFor(gh), acme);
    const refused = await fetch(`${gh.apiUrl}/app`, { headers: { authorization: `token ${token}` } });
    expect(refused.status).toBe(401);
  });

  it('lists the App’s installations to its JWT, oldest first, and octokit follows the Link header', async () => {
    const octokit = appFor(gh).octokit;
    const first = await octokit.request('GET /app/installations', { per_page: 1 });
    expect(first.data.map((installation) => installation.id)).toEqual([acme]);
    expect(first.data[0]).toMatchObject({
      account: { login: 'acme', type: 'Organization' },
      app_slug: 'repo402-stand-in',
      suspended_at: null,
    });
    const base = `${gh.apiUrl}/app/installations`;
    expect(first.headers.link).toBe(
      `<${base}?per_page=1&page=2>; rel="next", <${base}?per_page=1&page=2>; rel="last"`,
    );

    const mark = gh.requests.length;
    const all = await octokit.paginate('GET /app/installations', { per_page: 1 });
    expect(all.map((installation) => installation.id)).toEqual([acme, mallory]);
    expect(requestsSince(mark).map((r) => `${r.path} ${r.authorization}`)).toEqual([
      '/api/v3/app/installations?per_page=1 jwt',
      '/api/v3/app/installations?per_page=1&page=2 jwt',
    ]);
    const token = await installationToken(appFor(gh), acme);
    expect((await fetch(base, { headers: { authorization: `token ${token}` } })).status).toBe(401);
  });

  it("lists an installation's repositories to its token only, paginated", async () => {
    const octokit = await appFor(gh).getInstallationOctokit(acme);
    const first = await octokit.request('GET /installation/repositories', { per_page: 2 });
    expect(first.data.total_count).toBe(3);
    expect(first.data.repository_selection).toBe('selected');
    expect(first.data.repositories.map((repo) => repo.full_name)).toEqual(['acme/widget', 'acme/many']);
    expect(first.data.repositories[0]).toMatchObject({
      id: widget.id,
      private: true,
      default_branch: 'main',
      owner: { login: 'acme' },
      pushed_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
    });
    const base = `${gh.apiUrl}/installation/repositories`;
    expect(first.headers.link).toBe(
      `<${base}?per_page=2&page=2>; rel="next", <${base}?per_page=2&page=2>; rel="last"`,
    );

    const mark = gh.requests.length;
    const all = await octokit.paginate('GET /installation/repositories', { per_page: 2 });
    expect(all.map((repo) => repo.id)).toEqual([widget.id, many.id, big.id]);
    expect(requestsSince(mark).map((r) => `${r.path} ${r.authorization}`)).toEqual([
      '/api/v3/installation/repositories?per_page=2 token',
      '/api/v3/installation/repositories?per_page=2&page=2 token',
    ]);

    const other = await appFor(gh).getInstallationOctokit(mallory);
    const theirs = await other.request('GET /installation/repositories');
    expect(theirs.data.repositories.map((repo) => repo.full_name)).toEqual(['mallory/tool']);
    expect((await fetch(base)).status).toBe(401);
    const { token: jwt } = (await appFor(gh).octokit.auth({ type: 'app' })) as { token: string };
    expect((await fetch(base, { headers: { authorization: `Bearer ${jwt}` } })).status).toBe(401);
  });

  it('serves the installation to the App', async () => {
    const { data } = await appFor(gh).octokit.request('GET /app/installations/{installation_id}', {
      installation_id: acme,
    });
    expect(data).toMatchObject({
      id: acme,
      app_id: gh.appId,
      target_type: 'Organization',
      account: { login: 'acme', type: 'Organization' },
      permissions: { contents: 'read', metadata: 'read' },
      repository_selection: 'selected',
      suspended_at: null,
    });
  });

  it('serves a repository by name and by id', async () => {
    const octokit = await appFor(gh).getInstallationOctokit(acme);
    const { data } = await octokit.rest.repos.get({ owner: 'acme', repo: 'widget' });
    expect(data).toMatchObject({
      id: widget.id,
      name: 'widget',
      full_name: 'acme/widget',
      private: true,
      visibility: 'private',
      description: 'A widget',
      topics: ['widgets', 'cli'],
      language: 'JavaScript',
      default_branch: 'main',
      stargazers_count: 42,
      archived: false,
      disabled: false,
      license: { key: 'mit', name: 'MIT License', spdx_id: 'MIT' },
      owner: { login: 'acme', type: 'Organization' },
      html_url: `${gh.webUrl}/acme/widget`,
      clone_url: `${gh.webUrl}/acme/widget.git`,
    });
    expect(data.clone_url).toBe(widget.cloneUrl);
    expect(data.size).toBeGreaterThan(0);
    expect(Date.parse(data.pushed_at)).toBeGreaterThan(0);

    const byId = await octokit.request('GET /repositories/{id}', { id: widget.id });
    expect(byId.data.full_name).toBe('acme/widget');
  });

  it('lists tags by name, descending, and octokit follows the Link header', async () => {
    const octokit = await appFor(gh).getInstallationOctokit(acme);
    const first = await octokit.rest.repos.listTags({ owner: 'acme', repo: 'many', per_page: 10 });
    expect(first.data).toHaveLength(10);
    const base = `${gh.apiUrl}/repositories/${many.id}/tags`;
    expect(first.headers.link).toBe(
      `<${base}?per_page=10&page=2>; rel="next", <${base}?per_page=10&page=3>; rel="last"`,
    );

    const mark = gh.requests.length;
    const all = await octokit.paginate(octokit.rest.repos.listTags, {
      owner: 'acme',
      repo: 'many',
      per_page: 10,
    });
    const names = Array.from({ length: 25 }, (_, i) => `v0.${i}.0`)
      .sort()
      .reverse();
    expect(all.map((t) => t.name)).toEqual(names);
    expect(requestsSince(mark).map((r) => r.path)).toEqual([
      '/api/v3/repos/acme/many/tags?per_page=10',
      `/api/v3/repositories/${many.id}/tags?per_page=10&page=2`,
      `/api/v3/repositories/${many.id}/tags?per_page=10&page=3`,
    ]);

    const tags = await octokit.rest.repos.listTags({ owner: 'acme', repo: 'widget' });
    expect(tags.data).toEqual([
      {
        name: 'v1.1.0',
        commit: { sha: v11.commit, url: `${gh.apiUrl}/repos/acme/widget/commits/${v11.commit}` },
        zipball_url: `${gh.apiUrl}/repos/acme/widget/zipball/refs/tags/v1.1.0`,
        tarball_url: `${gh.apiUrl}/repos/acme/widget/tarball/refs/tags/v1.1.0`,
        node_id: expect.any(String),
      },
      expect.objectContaining({ name: 'v1.0.0', commit: expect.objectContaining({ sha: v1.commit }) }),
    ]);
    expect(tags.headers.link).toBeUndefined();
  });

  it('resolves a commit by tag, branch and sha; an unknown ref is a 422', async () => {
    const octokit = await appFor(gh).getInstallationOctokit(acme);
    const byTag = await octokit.rest.repos.getCommit({ owner: 'acme', repo: 'widget', ref: 'v1.1.0' });
    expect(byTag.data).toMatchObject({
      sha: v11.commit,
      commit: { tree: { sha: v11.tree }, message: 'v1.1.0', author: { name: 'acme' } },
      parents: [{ sha: v1.commit }],
      author: { login: 'acme' },
      html_url: `${gh.webUrl}/acme/widget/commit/${v11.commit}`,
    });
    const byBranch = await octokit.rest.repos.getCommit({ owner: 'acme', repo: 'widget', ref: 'main' });
    expect(byBranch.data.sha).toBe(v11.commit);
    const bySha = await octokit.rest.repos.getCommit({ owner: 'acme', repo: 'widget', ref: v1.commit });
    expect(bySha.data.commit.tree.sha).toBe(v1.tree);

    const unknown = await octokit.rest.repos
      .getCommit({ owner: 'acme', repo: 'widget', ref: 'v9.9.9' })
      .catch((e) => e);
    expect(unknown.status).toBe(422);
    expect(unknown.response.data.message).toBe('No commit found for SHA: v9.9.9');
  });

  it('reads a tree recursively, from a tree or a commit id, and truncates past the limit', async () => {
    const octokit = await appFor(gh).getInstallationOctokit(acme);
    const { data } = await octokit.rest.git.getTree({
      owner: 'acme',
      repo: 'widget',
      tree_sha: v1.tree,
      recursive: '1',
    });
    expect(data.sha).toBe(v1.tree);
    expect(data.truncated).toBe(false);
    expect(data.tree.map((e) => [e.path, e.type, e.mode, e.size])).toEqual([
      ['README.md', 'blob', '100644', 9],
      ['bin', 'tree', '040000', undefined],
      ['bin/run', 'blob', '100644', 10],
      ['src', 'tree', '040000', undefined],
      ['src/index.js', 'blob', '100644', 18],
    ]);
    expect(data.tree[0]?.url).toBe(`${gh.apiUrl}/repos/acme/widget/git/blobs/${data.tree[0]?.sha}`);

    const fromCommit = await octokit.rest.git.getTree({ owner: 'acme', repo: 'widget', tree_sha: v1.commit });
    expect(fromCommit.data.sha).toBe(v1.tree);
    expect(fromCommit.data.tree.map((e) => e.path)).toEqual(['README.md', 'bin', 'src']);

    const cut = await octokit.rest.git.getTree({
      owner: 'acme',
      repo: 'big',
      tree_sha: 'v1.0.0',
      recursive: '1',
    });
    expect(cut.data.truncated).toBe(true);
    expect(cut.data.tree).toHaveLength(5);

    const missing = await octokit.rest.git
      .getTree({ owner: 'acme', repo: 'widget', tree_sha: ZERO_SHA })
      .catch((e) => e);
    expect(missing.status).toBe(404);
  });

  it('serves user and organization profiles', async () => {
    gh.setUser('mallory', { name: 'Mallory', location: 'Nowhere', followers: 3 });
    const octokit = await appFor(gh).getInstallationOctokit(acme);
    const org = await octokit.rest.users.getByUsername({ username: 'acme' });
    expect(org.data).toMatchObject({
      login: 'acme',
      type: 'Organization',
      name: 'Acme Inc',
      bio: 'Widgets',
      blog: 'https://acme.example',
      public_repos: 0,
      html_url: `${gh.webUrl}/acme`,
    });
    const user = await octokit.rest.users.getByUsername({ username: 'mallory' });
    expect(user.data).toMatchObject({
      login: 'mallory',
      type: 'User',
      name: 'Mallory',
      followers: 3,
      company: null,
    });
    const nobody = await octokit.rest.users.getByUsername({ username: 'nobody' }).catch((e) => e);
    expect(nobody.status).toBe(404);
  });
});

describe('git smart HTTP', () => {
  it('fetches a tag with the token in a header only', async () => {
    const token = await installationToken(appFor(gh), acme);
    const dir = await bareRepo();
    const mark = gh.requests.length;
    const fetched = await gitClient(
      dir,
      ['fetch', '-q', '--depth', '1', widget.cloneUrl, 'refs/tags/v1.0.0:refs/tags/v1.0.0'],
      token,
    );
    expect(fetched).toMatchObject({ code: 0 });
    expect((await gitClient(dir, ['rev-parse', 'refs/tags/v1.0.0^{commit}'])).stdout.trim()).toBe(v1.commit);

    const gitRequests = requestsSince(mark);
    expect(gitRequests.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([
      'GET /acme/widget.git/info/refs?service=git-upload-pack 200',
      'POST /acme/widget.git/git-upload-pack 200',
      'POST /acme/widget.git/git-upload-pack 200',
    ]);
    expect(gitRequests.every((r) => r.authorization === 'basic' && !r.path.includes(token))).toBe(true);
  });

  it('fetches a commit by id that no ref points at, in protocol v2 and v0', async () => {
    const moved = await gh.createRepo({ owner: 'acme', name: 'moved', installationId: acme });
    const orphaned = await gh.pushTag(moved, { tag: 'v1.0.0', files: { 'a.txt': '1\n' } });
    await gh.moveTag(moved, 'v1.0.0', { 'a.txt': '2\n' });
    const token = await installationToken(appFor(gh), acme);
    // v2 serves any reachable commit; v0 only with uploadpack.allowReachableSHA1InWant, as on GitHub.
    for (const version of ['2', '0']) {
      const dir = await bareRepo();
      const args = [
        '-c',
        `protocol.version=${version}`,
        'fetch',
        '-q',
        '--depth',
        '1',
        moved.cloneUrl,
        orphaned.commit,
      ];
      expect(await gitClient(dir, args, token)).toMatchObject({ code: 0 });
      expect((await gitClient(dir, ['cat-file', '-t', orphaned.commit])).stdout.trim()).toBe('commit');
    }
  });

  it('streams a gzip-compressed upload-pack request (git compresses large ones)', async () => {
    const token = await installationToken(appFor(gh), acme);
    const dir = await bareRepo();
    const mark = gh.requests.length;
    const url = `${gh.webUrl}/acme/many.git`;
    expect(await gitClient(dir, ['fetch', '-q', url, 'refs/tags/*:refs/tags/*'], token)).toMatchObject({
      code: 0,
    });
    expect((await gitClient(dir, ['tag'])).stdout.trim().split('\n')).toHaveLength(25);
    expect(requestsSince(mark).some((r) => r.contentEncoding === 'gzip' && r.status === 200)).toBe(true);
  });

  it('passes the Git-Protocol header through, so protocol v2 is spoken', async () => {
    const token = await installationToken(appFor(gh), acme);
    const response = await fetch(`${widget.cloneUrl}/info/refs?service=git-upload-pack`, {
      headers: {
        authorization: `Basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`,
        'git-protocol': 'version=2',
      },
    });
    expect(response.headers.get('content-type')).toBe('application/x-git-upload-pack-advertisement');
    expect(await response.text()).toContain('version 2');
  });

  it("refuses a wrong token, another installation's token, no token, and any push", async () => {
    const dir = await bareRepo();
    const fetchWith = (token?: string) =>
      gitClient(dir, ['fetch', '-q', widget.cloneUrl, 'refs/tags/v1.0.0:refs/tags/v1.0.0'], token);
    const lastStatus = () => gh.requests.at(-1)?.status;

    expect((await fetchWith(`ghs_${'x'.repeat(36)}`)).code).not.toBe(0);
    expect(lastStatus()).toBe(401);
    expect((await fetchWith(await installationToken(appFor(gh), mallory))).code).not.toBe(0);
    expect(lastStatus()).toBe(404);
    expect((await fetchWith()).code).not.toBe(0);
    expect(lastStatus()).toBe(401);

    const token = await installationToken(appFor(gh), acme);
    expect((await fetchWith(token)).code).toBe(0);
    const mark = gh.requests.length;
    const pushed = await gitClient(dir, ['push', widget.cloneUrl, 'refs/tags/v1.0.0:refs/heads/evil'], token);
    expect(pushed.code).not.toBe(0);
    expect(requestsSince(mark).map((r) => `${r.path} ${r.status}`)).toEqual([
      '/acme/widget.git/info/refs?service=git-receive-pack 403',
    ]);
  });
});

describe('webhook deliveries', () => {
  let receiver: http.Server;
  let hookUrl: string;
  const received: Array<{ headers: http.IncomingHttpHeaders; body: string }> = [];

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(202).end('accepted');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks/github`;
  });

  afterAll(async () => {
    await new Promise((resolve) => receiver.close(resolve));
  });

  it('sends create and push for a new tag, signed over the raw body', async () => {
    received.length = 0;
    const pushed = await gh.pushTag(widget, {
      tag: 'v2.0.0',
      files: { 'README.md': '# two\n' },
      webhookUrl: hookUrl,
    });
    expect(pushed.deliveries.map((d) => [d.status, d.body])).toEqual([
      [202, 'accepted'],
      [202, 'accepted'],
    ]);
    const webhooks = new Webhooks({ secret: gh.webhookSecret });
    const [create, push] = received as [(typeof received)[0], (typeof received)[0]];
    for (const delivery of [create, push]) {
      expect(await webhooks.verify(delivery.body, String(delivery.headers['x-hub-signature-256']))).toBe(
        true,
      );
      expect(delivery.headers).toMatchObject({
        'content-type': 'application/json',
        'user-agent': expect.stringMatching(/^GitHub-Hookshot\/[0-9a-f]+$/),
        'x-github-delivery': expect.stringMatching(/^[0-9a-f-]{36}$/),
        'x-github-hook-id': expect.stringMatching(/^\d+$/),
        'x-github-hook-installation-target-type': 'integration',
        'x-github-hook-installation-target-id': String(gh.appId),
      });
    }
    expect(create.headers['x-github-event']).toBe('create');
    expect(JSON.parse(create.body)).toMatchObject({
      ref: 'v2.0.0',
      ref_type: 'tag',
      master_branch: 'main',
      pusher_type: 'user',
      repository: { id: widget.id, full_name: 'acme/widget', private: true },
      installation: { id: acme },
      organization: { login: 'acme' },
      sender: { login: 'acme' },
    });
    expect(push.headers['x-github-event']).toBe('push');
    expect(JSON.parse(push.body)).toMatchObject({
      ref: 'refs/tags/v2.0.0',
      before: ZERO_SHA,
      after: pushed.commit,
      created: true,
      deleted: false,
      forced: false,
      base_ref: 'refs/heads/main',
      commits: [],
      head_commit: {
        id: pushed.commit,
        tree_id: pushed.tree,
        added: [],
        removed: ['bin/run', 'src/index.js'],
      },
      repository: { id: widget.id, created_at: expect.any(Number), master_branch: 'main' },
      installation: { id: acme },
    });
  });

  it('sends a forced push when a tag moves and a deleting push when it goes', async () => {
    received.length = 0;
    const moved = await gh.moveTag(
      widget,
      'v2.0.0',
      { 'README.md': '# two, again\n' },
      { webhookUrl: hookUrl },
    );
    const deleted = await gh.deleteTag(widget, 'v2.0.0', { webhookUrl: hookUrl });
    expect(deleted.map((d) => d.status)).toEqual([202]);
    const [move, remove] = received.map((r) => JSON.parse(r.body));
    expect(move).toMatchObject({
      ref: 'refs/tags/v2.0.0',
      after: moved.commit,
      created: false,
      forced: true,
    });
    expect(move.before).not.toBe(ZERO_SHA);
    expect(remove).toMatchObject({
      ref: 'refs/tags/v2.0.0',
      before: moved.commit,
      after: ZERO_SHA,
      deleted: true,
      head_commit: null,
    });
  });

  it('can send a wrong, a missing or a forged signature, and replay a delivery id', async () => {
    const webhooks = new Webhooks({ secret: gh.webhookSecret });
    const payload = await gh.payloads.tagCreate(widget, 'v1.0.0');
    const signatureOf = async (options: Parameters<GitHubStandIn['deliver']>[3]) => {
      received.length = 0;
      const delivery = await gh.deliver(hookUrl, 'create', payload, options);
      const got = received[0]!;
      return {
        delivery,
        got,
        valid: await webhooks.verify(got.body, String(got.headers['x-hub-signature-256'])),
      };
    };
    expect((await signatureOf({})).valid).toBe(true);
    expect((await signatureOf({ signature: 'wrong' })).valid).toBe(false);
    expect((await signatureOf({ secret: 'not-the-apps-secret' })).valid).toBe(false);
    const missing = await signatureOf({ signature: 'missing' });
    expect(missing.got.headers['x-hub-signature-256']).toBeUndefined();
    expect(missing.got.headers['x-hub-signature']).toBeUndefined();
    const replay = await signatureOf({ deliveryId: missing.delivery.deliveryId });
    expect(replay.got.headers['x-github-delivery']).toBe(missing.delivery.deliveryId);
  });

  it('sends installation and installation_repositories events with the state change', async () => {
    received.length = 0;
    await gh.suspendInstallation(mallory, { webhookUrl: hookUrl });
    await gh.unsuspendInstallation(mallory, { webhookUrl: hookUrl });
    await gh.removeRepoFromInstallation('mallory/tool', { webhookUrl: hookUrl });
    await gh.addRepoToInstallation('mallory/tool', mallory, { webhookUrl: hookUrl });
    expect(received.map((r) => [r.headers['x-github-event'], JSON.parse(r.body).action])).toEqual([
      ['installation', 'suspend'],
      ['installation', 'unsuspend'],
      ['installation_repositories', 'removed'],
      ['installation_repositories', 'added'],
    ]);
    const [suspend, , removed] = received.map((r) => JSON.parse(r.body));
    expect(suspend.installation).toMatchObject({ id: mallory, suspended_at: expect.any(String) });
    expect(suspend.repositories).toEqual([expect.objectContaining({ full_name: 'mallory/tool' })]);
    expect(removed).toMatchObject({
      repository_selection: 'selected',
      repositories_removed: [{ full_name: 'mallory/tool', private: true }],
      repositories_added: [],
    });
  });

  it('sends a repository event when a repository is made public or private, and can leave headers out', async () => {
    received.length = 0;
    await gh.changeVisibility('mallory/tool', { private: false, webhookUrl: hookUrl });
    await gh.changeVisibility('mallory/tool', { private: true, webhookUrl: hookUrl });
    expect(received.map((r) => [r.headers['x-github-event'], JSON.parse(r.body).action])).toEqual([
      ['repository', 'publicized'],
      ['repository', 'privatized'],
    ]);
    const [publicized, privatized] = received.map((r) => JSON.parse(r.body));
    expect(publicized).toMatchObject({
      repository: { full_name: 'mallory/tool', private: false },
      installation: { id: mallory },
    });
    expect(privatized.repository.private).toBe(true);
    received.length = 0;
    await gh.deliver(hookUrl, 'ping', {}, { omitHeaders: ['x-github-event', 'x-github-delivery'] });
    expect(received[0]!.headers['x-github-event']).toBeUndefined();
    expect(received[0]!.headers['x-github-delivery']).toBeUndefined();
    expect(received[0]!.headers['x-hub-signature-256']).toMatch(/^sha256=/);
  });
});

describe("GitHub's refusals", () => {
  it('refuses tokens to a suspended installation and answers its tokens with 403 until unsuspended', async () => {
    const octokit = await appFor(gh).getInstallationOctokit(mallory);
    await octokit.rest.repos.get({ owner: 'mallory', repo: 'tool' });
    await gh.suspendInstallation(mallory);
    const refused = await installationToken(appFor(gh), mallory).catch((e) => e);
    expect(refused.status).toBe(403);
    expect(refused.response.data.message).toBe('This installation has been suspended');
    const used = await octokit.rest.repos.get({ owner: 'mallory', repo: 'tool' }).catch((e) => e);
    expect(used.status).toBe(403);
    await gh.unsuspendInstallation(mallory);
    expect((await octokit.rest.repos.get({ owner: 'mallory', repo: 'tool' })).status).toBe(200);
  });

  it('forgets an uninstalled installation and revokes its tokens', async () => {
    const gone = gh.createInstallation({ account: { login: 'gone' } }).id;
    await gh.createRepo({ owner: 'gone', name: 'old', installationId: gone });
    const token = await installationToken(appFor(gh), gone);
    await gh.uninstall(gone);
    const refused = await installationToken(appFor(gh), gone).catch((e) => e);
    expect(refused.status).toBe(404);
    // octokit retries a 401 for five seconds after issuing a token (replication lag): ask directly.
    const response = await fetch(`${gh.apiUrl}/repos/gone/old`, {
      headers: { authorization: `token ${token}` },
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({
      message: 'Bad credentials',
      documentation_url: 'https://docs.github.com/rest',
      status: '401',
    });
  });

  it('hides a private repository removed from the installation, as if it did not exist', async () => {
    const octokit = await appFor(gh).getInstallationOctokit(acme);
    await gh.removeRepoFromInstallation(big);
    const hidden = await octokit.rest.repos.get({ owner: 'acme', repo: 'big' }).catch((e) => e);
    expect(hidden.status).toBe(404);
    expect(hidden.response.data).toEqual({
      message: 'Not Found',
      documentation_url: 'https://docs.github.com/rest/repos/repos#get-a-repository',
      status: '404',
    });
    const viaId = await octokit.request('GET /repositories/{id}/tags', { id: big.id }).catch((e) => e);
    expect(viaId.status).toBe(404);
    await gh.addRepoToInstallation(big, acme);
    expect((await octokit.rest.repos.get({ owner: 'acme', repo: 'big' })).status).toBe(200);
  });

  it('lets anyone read a public repository, as GitHub does', async () => {
    const stranger = await appFor(gh).getInstallationOctokit(mallory);
    expect((await stranger.rest.repos.get({ owner: 'acme', repo: 'widget' }).catch((e) => e)).status).toBe(
      404,
    );
    gh.setPrivate(widget, false);
    try {
      const { data } = await stranger.rest.repos.get({ owner: 'acme', repo: 'widget' });
      expect(data).toMatchObject({ private: false, visibility: 'public' });
      const dir = await bareRepo();
      const anonymous = await gitClient(dir, [
        'fetch',
        '-q',
        widget.cloneUrl,
        'refs/tags/v1.0.0:refs/tags/v1.0.0',
      ]);
      expect(anonymous.code).toBe(0);
      expect((await fetch(`${gh.apiUrl}/repos/acme/widget`)).status).toBe(200);
    } finally {
      gh.setPrivate(widget, true);
    }
    expect((await fetch(`${gh.apiUrl}/repos/acme/widget`)).status).toBe(404);
  });

  it('checks the App JWT: signature, issuer, and GitHub time-claim messages octokit recovers from', async () => {
    const post = (authorization?: string) =>
      fetch(`${gh.apiUrl}/app/installations/${acme}/access_tokens`, {
        method: 'POST',
        headers: authorization ? { authorization } : {},
      }).then(async (r) => ({
        status: r.status,
        message: ((await r.json()) as { message: string }).message,
      }));
    const undecodable = { status: 401, message: 'A JSON web token could not be decoded' };
    expect(await post()).toEqual(undecodable);
    expect(await post('Bearer not.a.jwt')).toEqual(undecodable);
    expect(await post(`token ${gh.tokensIssued[0]}`)).toEqual(undecodable);
    const other = await startGitHubStandIn();
    try {
      const foreign = new App({ appId: gh.appId, privateKey: other.privateKeyPem, log: silent });
      const { token } = (await foreign.octokit.auth({ type: 'app' })) as { token: string };
      expect(await post(`Bearer ${token}`)).toEqual(undecodable);
    } finally {
      await other.close();
    }
    const unknown = await installationToken(appFor(gh), 1).catch((e) => e);
    expect(unknown.status).toBe(404);

    skewMs = 20 * 60_000;
    try {
      const before = gh.tokenRequests;
      const mark = gh.requests.length;
      await installationToken(appFor(gh), acme);
      expect(gh.tokenRequests).toBe(before + 2);
      expect(requestsSince(mark).map((r) => r.status)).toEqual([401, 201]);
    } finally {
      skewMs = 0;
    }
  });

  it('expires installation tokens after an hour', async () => {
    const token = await installationToken(appFor(gh), acme);
    const get = () =>
      fetch(`${gh.apiUrl}/repos/acme/widget`, { headers: { authorization: `Bearer ${token}` } });
    expect((await get()).status).toBe(200);
    skewMs = 61 * 60_000;
    try {
      expect((await get()).status).toBe(401);
    } finally {
      skewMs = 0;
    }
  });
});
