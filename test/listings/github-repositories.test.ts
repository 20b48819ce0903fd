import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/identity/api-keys.js';
import { CURRENT_SCOPES } from '../../src/identity/scopes.js';
import {
  MAX_SCANNED_INSTALLATIONS,
  MAX_SCANNED_REPOSITORIES,
} from '../../src/listings/github-repositories.js';
import { bearer, expectError, type RegisteredCreator, registerCreator } from '../identity/support.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { BACKENDS } from '../support/db.js';
import { type GitHubStandIn, type RepoHandle, startGitHubStandIn } from '../support/github/index.js';
import { expectSpecError } from '../support/openapi-routes.js';

/**
 * GET /api/github/repositories against the GitHub stand-in (a real HTTP server speaking GitHub's
 * REST API): which repositories a creator is shown, what is kept from everyone else, the bound of
 * the scan, its cache, and GitHub refusing.
 */

const URL = '/api/github/repositories';

function gitHubEnv(gh: GitHubStandIn, privateKeyPem = gh.privateKeyPem): Record<string, string> {
  return {
    GITHUB_APP_ID: String(gh.appId),
    GITHUB_APP_PRIVATE_KEY: privateKeyPem,
    GITHUB_WEBHOOK_SECRET: gh.webhookSecret,
    GITHUB_API_URL: gh.apiUrl,
    GITHUB_GIT_ALLOW_HTTP: 'true',
  };
}

/** A log destination that keeps every line in `lines`. */
function into(lines: string[]): Writable {
  return new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
}

describe.each(BACKENDS)('GET /api/github/repositories on %s', (backend) => {
  describe('without a GitHub App', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp({ backend, env: { RATE_LIMIT_CREATOR: '3/60' } });
    });
    afterAll(async () => t?.close());

    it('is a creator route of the OpenAPI document, with a named response schema', async () => {
      const doc = (await t.app.inject({ url: '/api/openapi.json' })).json();
      const operation = doc.paths['/api/github/repositories'].get;
      expect(operation.tags).toEqual(['creator']);
      expect(operation.security).toEqual([{ apiKey: ['listings:read'] }]);
      expect(operation.responses['200'].content['application/json'].schema).toEqual({
        $ref: '#/components/schemas/GitHubRepositories',
      });
      expect(Object.keys(operation.responses)).toEqual(
        expect.arrayContaining(['200', '400', '401', '403', '429', '500', '503']),
      );
      expect(Object.keys(doc.components.schemas.GitHubRepositories.properties)).toEqual([
        'enabled',
        'install_url',
        'claim',
        'installations',
        'truncated',
      ]);
    });

    it('says the rail is not enabled, with the claim still explained, and is rate limited as a creator route', async () => {
      const creator = await registerCreator(t);
      const res = await t.app.inject({ url: URL, headers: bearer(creator.apiKey) });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.json()).toEqual({
        enabled: false,
        install_url: null,
        claim: { file: '.repo402', line: creator.handle },
        installations: [],
        truncated: false,
      });
      expect((await t.app.inject({ url: URL, headers: bearer(creator.apiKey) })).statusCode).toBe(200);
      expect((await t.app.inject({ url: URL, headers: bearer(creator.apiKey) })).statusCode).toBe(200);
      const limited = await t.app.inject({ url: URL, headers: bearer(creator.apiKey) });
      expectError(limited, 429, 'rate_limited');
      expect(limited.headers['retry-after']).toMatch(/^\d+$/);
    });
  });

  describe('with the App installed on several accounts', () => {
    let gh: GitHubStandIn;
    let t: TestApp;
    let alice: RegisteredCreator;
    let bob: RegisteredCreator;
    let carol: RegisteredCreator;
    let acme: number;
    let personal: number;
    const repos: Record<string, RepoHandle> = {};
    const logLines: string[] = [];

    /** A repository whose default branch holds `claim` as `.repo402` (no file when undefined). */
    const repoWith = async (
      owner: string,
      name: string,
      installationId: number,
      claim: string | undefined,
      options: { private?: boolean } = {},
    ) => {
      const repo = await gh.createRepo({ owner, name, installationId, size: 1, ...options });
      await gh.pushTag(repo, {
        tag: 'claim',
        files: claim === undefined ? { 'README.md': 'no claim\n' } : { '.repo402': claim },
      });
      repos[repo.fullName] = repo;
      return repo;
    };
    /** Empty repositories (nothing pushed), `count` of them, created in order. */
    const emptyRepos = async (owner: string, installationId: number, count: number, from = 0) => {
      for (let start = from; start < from + count; start += 20) {
        const names = Array.from({ length: Math.min(20, from + count - start) }, (_, i) => `r${start + i}`);
        // Ids are handed out as the calls are made, so the list order is the order of `names`.
        await Promise.all(names.map((name) => gh.createRepo({ owner, name, installationId, size: 1 })));
      }
    };

    const list = async (creator: RegisteredCreator) => {
      const res = await t.app.inject({ url: URL, headers: bearer(creator.apiKey) });
      expect(res.statusCode, res.body).toBe(200);
      return res;
    };
    /** The GitHub requests `run` makes, as `METHOD path`. */
    const requestsOf = async (run: () => Promise<unknown>) => {
      const mark = gh.requests.length;
      await run();
      return gh.requests.slice(mark).map((request) => `${request.method} ${request.path}`);
    };
    /** The whole answer for `creator`, given the installations it should show. */
    const answer = (creator: RegisteredCreator, installations: unknown[], truncated = false) => ({
      enabled: true,
      install_url: `${gh.webUrl}/apps/repo402-stand-in/installations/new`,
      claim: { file: '.repo402', line: creator.handle },
      installations,
      truncated,
    });
    /** Alice's answer, with the GitHub requests it took. */
    const aliceScan = async () => {
      const mark = gh.requests.length;
      const body = (await list(alice)).json();
      return {
        body,
        requests: gh.requests.slice(mark).map((request) => `${request.method} ${request.path}`),
      };
    };
    const contentsReads = (requests: string[]) =>
      requests.filter((request) => request.includes('/contents/'));
    const entry = (
      name: string,
      fields: { private?: boolean; listing_id?: string | null; in_use?: boolean } = {},
    ) => ({
      github_repo_id: repos[name]!.id,
      full_name: name,
      private: true,
      default_branch: 'main',
      listing_id: null,
      in_use: false,
      ...fields,
    });

    beforeAll(async () => {
      gh = await startGitHubStandIn();
      t = await createTestApp({
        backend,
        env: { ...gitHubEnv(gh), LOG_LEVEL: 'debug' },
        logDestination: into(logLines),
      });
      [alice, bob, carol] = [await registerCreator(t), await registerCreator(t), await registerCreator(t)];
      acme = gh.createInstallation({ account: { login: 'acme', type: 'Organization' } }).id;
      personal = gh.createInstallation({ account: { login: 'alicegh' } }).id;
      await repoWith('acme', 'widget', acme, `${alice.handle}\n`);
      await repoWith('acme', 'site', acme, `${alice.handle}\n`, { private: false });
      await repoWith('acme', 'bobs', acme, `${bob.handle}\n`);
      await repoWith('acme', 'plain', acme, undefined);
      await repoWith('acme', 'shared', acme, `${bob.handle}\n${alice.handle}\n`);
      // Not a line of its own: a comment naming the handle, and the handle with more after it.
      await repoWith('acme', 'near', acme, `# ${alice.handle}\n${alice.handle}-fork\n`);
      // The same rule as listing creation: case and spaces around the handle do not matter.
      await repoWith('acme', 'spaced', acme, `  ${alice.handle.toUpperCase()}  \r\n`);
      await repoWith('alicegh', 'tool', personal, `${alice.handle}\n`);
    }, 120_000);
    afterAll(async () => {
      await t?.close();
      await gh?.close();
    });

    it("lists the caller's claimed repositories, private and public, across installations", async () => {
      const requests = await requestsOf(async () => {
        expect((await list(alice)).json()).toEqual(
          answer(alice, [
            {
              installation_id: acme,
              account: 'acme',
              repositories: [
                entry('acme/widget'),
                entry('acme/site', { private: false }),
                entry('acme/shared'),
                entry('acme/spaced'),
              ],
            },
            { installation_id: personal, account: 'alicegh', repositories: [entry('alicegh/tool')] },
          ]),
        );
      });
      // One claim file read per repository of both installations, through the installation's token.
      expect(contentsReads(requests).sort()).toEqual(
        [...Object.values(repos)]
          .map((repo) => `GET /api/v3/repos/${repo.fullName}/contents/.repo402`)
          .sort(),
      );
      expect(requests).toContain('GET /api/v3/app');
    });

    it('reads no claim file again until the repository is pushed to: a repeated call costs the list pages', async () => {
      const again = await requestsOf(() => list(alice));
      expect(again.sort()).toEqual(
        [
          'GET /api/v3/app/installations?per_page=100',
          'GET /api/v3/installation/repositories?per_page=100',
          'GET /api/v3/installation/repositories?per_page=100',
        ].sort(),
      );
      // Another caller's scan reads the same files: still nothing read again.
      expect(contentsReads(await requestsOf(() => list(bob)))).toEqual([]);

      // A push changes pushed_at: that repository's file alone is read again.
      await gh.pushTag(repos['acme/plain']!, { tag: 'claimed', files: { '.repo402': `${alice.handle}\n` } });
      const afterPush = await aliceScan();
      expect(contentsReads(afterPush.requests)).toEqual(['GET /api/v3/repos/acme/plain/contents/.repo402']);
      expect(
        afterPush.body.installations[0].repositories.map((repo: { full_name: string }) => repo.full_name),
      ).toContain('acme/plain');
    });

    it("shows another creator only what claims them: none of the first creator's repositories or installations", async () => {
      const res = await list(bob);
      expect(res.json()).toEqual(
        answer(bob, [
          {
            installation_id: acme,
            account: 'acme',
            repositories: [entry('acme/bobs'), entry('acme/shared')],
          },
        ]),
      );
      for (const hidden of ['widget', 'site', 'plain', 'near', 'spaced', 'alicegh', 'tool', alice.handle]) {
        expect(res.body, hidden).not.toContain(hidden);
      }
      expect(res.body).not.toContain(String(personal));

      // A creator no repository claims learns nothing at all, not even that installations exist.
      const nobody = await list(carol);
      expect(nobody.json()).toMatchObject({ enabled: true, installations: [], truncated: false });
      for (const hidden of ['acme', 'alicegh', String(acme), String(personal), alice.handle, bob.handle]) {
        expect(nobody.body, hidden).not.toContain(hidden);
      }
    });

    it("marks the caller's own listing and any other live listing, and forgets both once retired", async () => {
      const create = (creator: RegisteredCreator, slug: string, repo: string) =>
        t.app.inject({
          method: 'POST',
          url: '/api/listings',
          headers: bearer(creator.apiKey),
          payload: { source: 'github', slug, installation_id: acme, repo },
        });
      const mine = await create(alice, 'widget', 'acme/widget');
      expect(mine.statusCode, mine.body).toBe(201);
      const theirs = await create(bob, 'shared', 'acme/shared');
      expect(theirs.statusCode, theirs.body).toBe(201);
      const repositories = async (creator: RegisteredCreator) =>
        (await list(creator))
          .json()
          .installations.find(
            (installation: { installation_id: number }) => installation.installation_id === acme,
          ).repositories as Array<{ full_name: string }>;
      const of = (found: Array<{ full_name: string }>, name: string) =>
        found.find((repo) => repo.full_name === name);

      const aliceSees = await repositories(alice);
      expect(of(aliceSees, 'acme/widget')).toEqual(
        entry('acme/widget', { listing_id: mine.json().id, in_use: true }),
      );
      // Bob's listing: in use, and which listing it is stays Bob's.
      expect(of(aliceSees, 'acme/shared')).toEqual(entry('acme/shared', { in_use: true }));
      expect(JSON.stringify(aliceSees)).not.toContain(theirs.json().id);
      const bobSees = await repositories(bob);
      expect(of(bobSees, 'acme/shared')).toEqual(
        entry('acme/shared', { listing_id: theirs.json().id, in_use: true }),
      );

      for (const [creator, listing] of [
        [alice, mine],
        [bob, theirs],
      ] as const) {
        const retired = await t.app.inject({
          method: 'DELETE',
          url: `/api/listings/${listing.json().id}`,
          headers: bearer(creator.apiKey),
        });
        expect(retired.statusCode, retired.body).toBe(200);
      }
      const afterRetire = await repositories(alice);
      expect(of(afterRetire, 'acme/widget')).toEqual(entry('acme/widget'));
      expect(of(afterRetire, 'acme/shared')).toEqual(entry('acme/shared'));
    });

    it('leaves out a suspended installation, and shows it again once unsuspended', async () => {
      await gh.suspendInstallation(personal);
      try {
        const requests = await requestsOf(async () => {
          const body = (await list(alice)).json();
          expect(body.installations.map((i: { installation_id: number }) => i.installation_id)).toEqual([
            acme,
          ]);
        });
        expect(requests.filter((request) => request.includes(`/app/installations/${personal}`))).toEqual([]);
      } finally {
        await gh.unsuspendInstallation(personal);
      }
      const body = (await list(alice)).json();
      expect(body.installations.map((i: { installation_id: number }) => i.installation_id)).toEqual([
        acme,
        personal,
      ]);
    });

    it("follows an installation's repository list past its first page", async () => {
      const bulk = gh.createInstallation({ account: { login: 'bulkco', type: 'Organization' } }).id;
      await emptyRepos('bulkco', bulk, 104);
      await repoWith('bulkco', 'last', bulk, `${alice.handle}\n`);
      const { body, requests } = await aliceScan();
      expect(body.truncated).toBe(false);
      expect(body.installations.at(-1)).toEqual({
        installation_id: bulk,
        account: 'bulkco',
        repositories: [entry('bulkco/last')],
      });
      expect(requests).toContain('GET /api/v3/installation/repositories?per_page=100&page=2');
      expect(contentsReads(requests)).toHaveLength(105);
    }, 60_000);

    it(`stops at ${MAX_SCANNED_REPOSITORIES} repositories and says the answer is truncated`, async () => {
      // Four installations: the repository bound, not the installation bound, is what stops the scan.
      expect(MAX_SCANNED_INSTALLATIONS).toBeGreaterThan(4);
      const scannedBefore = 8 + 105;
      const huge = gh.createInstallation({ account: { login: 'hugeco', type: 'Organization' } }).id;
      await repoWith('hugeco', 'first', huge, `${alice.handle}\n`);
      await emptyRepos('hugeco', huge, 98);
      await repoWith('hugeco', 'beyond', huge, `${alice.handle}\n`);
      const within = MAX_SCANNED_REPOSITORIES - scannedBefore;
      const { body, requests } = await aliceScan();
      expect(body.truncated).toBe(true);
      expect(body.installations.at(-1)).toEqual({
        installation_id: huge,
        account: 'hugeco',
        repositories: [entry('hugeco/first')],
      });
      // Every repository within the bound was read once (the others are cached), none past it.
      const reads = contentsReads(requests);
      expect(reads).toHaveLength(within);
      expect(reads).toContain('GET /api/v3/repos/hugeco/first/contents/.repo402');
      expect(reads).toContain(`GET /api/v3/repos/hugeco/r${within - 2}/contents/.repo402`);
      expect(reads).not.toContain(`GET /api/v3/repos/hugeco/r${within - 1}/contents/.repo402`);
      expect(reads).not.toContain('GET /api/v3/repos/hugeco/beyond/contents/.repo402');
      // Bob's scan stops at the same bound and reads nothing new.
      const bobs = await requestsOf(async () => expect((await list(bob)).json().truncated).toBe(true));
      expect(contentsReads(bobs)).toEqual([]);
    }, 60_000);

    it('answers 401 invalid_key to no key and to a bad key, and 403 to a key without listings:read', async () => {
      const before = gh.requests.length;
      expectError(await t.app.inject({ url: URL }), 401, 'invalid_key');
      expectError(
        await t.app.inject({ url: URL, headers: bearer(`r402_${'A'.repeat(43)}`) }),
        401,
        'invalid_key',
      );
      expectError(
        await t.app.inject({ url: URL, headers: { authorization: 'Bearer nope' } }),
        401,
        'invalid_key',
      );
      const narrow = await issueApiKey(t.ctx.database.db, {
        creatorId: alice.id,
        kind: 'agent',
        at: t.clock.now(),
        scopes: CURRENT_SCOPES.filter((scope) => scope !== 'listings:read'),
      });
      const refused = await t.app.inject({ url: URL, headers: bearer(narrow.apiKey) });
      expectError(refused, 403, 'insufficient_scope');
      expectSpecError(refused, t.config.baseUrl, 'insufficient_scope');
      // Nothing was asked of GitHub for a caller the key guard refused.
      expect(gh.requests.length).toBe(before);
    });

    it('never logs a token', () => {
      expect(gh.tokensIssued.length).toBeGreaterThan(0);
      const logged = logLines.join('');
      expect(logged).toContain('"source":"octokit"');
      for (const token of gh.tokensIssued) expect(logged).not.toContain(token);
      expect(logged).not.toMatch(/eyJ[\w-]+\.[\w-]+\./);
    });
  });

  describe('when GitHub refuses the App', () => {
    let gh: GitHubStandIn;
    let other: GitHubStandIn;
    let t: TestApp;
    const logLines: string[] = [];
    beforeAll(async () => {
      [gh, other] = await Promise.all([startGitHubStandIn(), startGitHubStandIn()]);
      // The App's id with another App's key: GitHub refuses every JWT it signs.
      t = await createTestApp({
        backend,
        env: { ...gitHubEnv(gh, other.privateKeyPem), LOG_LEVEL: 'info' },
        logDestination: into(logLines),
      });
    });
    afterAll(async () => {
      await t?.close();
      await Promise.all([gh?.close(), other?.close()]);
    });

    it("answers the spec's internal error, saying GitHub did not answer, and logs GitHub's refusal", async () => {
      const creator = await registerCreator(t);
      const res = await t.app.inject({ url: URL, headers: bearer(creator.apiKey) });
      const body = expectSpecError(res, t.config.baseUrl, 'GitHub refusing');
      expect({ status: res.statusCode, code: body.code }).toEqual({ status: 500, code: 'internal' });
      expect(body.message).toContain('GitHub did not answer');
      expect(gh.requests.map((request) => `${request.path} ${request.status}`)).toEqual(['/api/v3/app 401']);
      const refusal = logLines
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .find((line) => line.msg === 'GitHub refused a call of the App');
      expect(refusal).toMatchObject({ status: 401, github: expect.stringContaining('JSON web token') });
    });
  });
});
