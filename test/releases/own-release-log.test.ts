import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/identity/api-keys.js';
import { parseVersion } from '../../src/platform/versions.js';
import { cutJob } from '../../src/releases/jobs.js';
import { findRelease, insertRelease } from '../../src/releases/store.js';
import { bearer, expectError, type RegisteredCreator, registerCreator } from '../identity/support.js';
import { type CreatedListing, createHostedListing, type SshKey, sshKeygen } from '../listings/support.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { BACKENDS } from '../support/db.js';
import { commitFile, eventually, testInspector, workRepo } from './support.js';

/**
 * GET /api/listings/{id}/releases: the creator's own release log of a listing, drafts included,
 * each release as GET /api/listings/{id} shows its head releases (with `scan_report`). Releases are
 * real cuts (a tag pushed into the listing's repository, then sync); the inspection is the test
 * inspector, so a version fails without planting a secret.
 */

let key: SshKey;
beforeAll(async () => {
  key = await sshKeygen('ed25519');
});

interface ListingReleaseBody {
  version: string;
  scan: string;
  scan_report?: unknown;
  [field: string]: unknown;
}

describe.each(BACKENDS)('GET /api/listings/{id}/releases on %s', (backend) => {
  let t: TestApp;
  let alice: RegisteredCreator;
  let listing: CreatedListing;
  let work: Awaited<ReturnType<typeof workRepo>>;

  beforeEach(async () => {
    t = await createTestApp({ backend, jobs: [cutJob] });
    t.ctx.inspectRelease = testInspector({ failing: ['1.1.0'] });
    alice = await registerCreator(t);
    listing = await createHostedListing(t, alice.apiKey, key.publicKey, {
      price_micro: '2500000',
      description: 'Tools',
      trigger_hint: 'When building',
    });
    work = await workRepo();
  });
  afterEach(async () => {
    await t.close();
  });

  const bare = () => path.join(t.dataDir, 'repos', listing.owner, `${listing.slug}.git`);
  const get = (url: string, apiKey = alice.apiKey) => t.app.inject({ url, headers: bearer(apiKey) });
  const ownLog = (query = '', apiKey = alice.apiKey, id = listing.id) =>
    get(`/api/listings/${id}/releases${query}`, apiKey);
  /** Tags a commit, pushes it straight into the bare repository and cuts it with sync; waits for the verdict. */
  const cutAndWait = async (version: string) => {
    await commitFile(work, 'v.txt', `${version}\n`, `Version ${version}`);
    await work.git('tag', `v${version}`);
    await work.git('push', '-q', bare(), 'main', '--tags');
    const sync = await t.app.inject({
      method: 'POST',
      url: `/api/listings/${listing.id}/sync`,
      headers: bearer(alice.apiKey),
      payload: { version },
    });
    expect(sync.statusCode, sync.body).toBe(202);
    await eventually(async () => {
      const row = await findRelease(t.ctx.database.db, listing.id, version);
      return row && row.verdict !== 'pending' ? row : undefined;
    });
  };

  describe('happy', () => {
    it("lists a draft's passing and failing releases with their scan reports, as GET /api/listings/{id} shows them", async () => {
      await cutAndWait('1.0.0');
      await cutAndWait('1.1.0');

      const res = await ownLog();
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['cache-control']).toBe('private, no-store');
      const body = res.json() as { releases: ListingReleaseBody[]; next_cursor: string | null };
      expect(body.next_cursor).toBeNull();
      expect(body.releases.map((release) => `${release.version}:${release.scan}`)).toEqual([
        '1.1.0:fail',
        '1.0.0:pass',
      ]);
      expect(body.releases[0]).toMatchObject({
        tag: 'v1.1.0',
        commit_sha: expect.stringMatching(/^[0-9a-f]{40}$/),
        artifact_sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
        changelog: '- Version 1.1.0',
        scanner_version: 'test-fixture-scanner',
        analyzer_version: 'test-fixture-analyzer',
        // The prices in force when it was cut: the draft's.
        price_micro: '2500000',
        update_price_micro: '0',
        scan_report: { verdict: 'fail', findings: [{ path: 'secret.txt', line: 1 }] },
      });
      expect(body.releases[1]!.scan_report).toMatchObject({ verdict: 'pass', findings: [] });

      // The same view as the single-listing answer's head releases, field for field.
      const view = (await get(`/api/listings/${listing.id}`)).json();
      expect(view.status).toBe('draft');
      expect(body.releases[0]).toEqual(view.newest_release);
      expect(body.releases[1]).toEqual(view.latest_release);
      // A draft has no public log; its creator's log is the only place its releases are listed.
      expectError(
        await t.app.inject({ url: `/api/v/${listing.owner}/${listing.slug}/releases` }),
        404,
        'not_found',
      );
    });

    it('pages 50 at a time with the public log’s cursor, for published and retired listings alike', async () => {
      await cutAndWait('1.0.0');
      await cutAndWait('1.1.0');
      // 49 older releases refused for a size limit (no zip), written as the cut records them.
      const db = t.ctx.database.db;
      for (let patch = 1; patch <= 49; patch += 1) {
        const version = `0.0.${patch}`;
        await insertRelease(db, {
          listingId: listing.id,
          version,
          ...parseVersion(version)!,
          tag: `v${version}`,
          commitSha: 'a'.repeat(40),
          publishedAt: t.clock.now(),
          changelog: `Release ${version}`,
          verdict: 'fail',
          scan: { verdict: 'fail', findings: [{ check: 'limits', rule_id: 'file-count' }] },
        });
      }
      const publish = await t.app.inject({
        method: 'POST',
        url: `/api/listings/${listing.id}/publish`,
        headers: bearer(alice.apiKey),
      });
      expect(publish.statusCode, publish.body).toBe(200);

      const first = (await ownLog()).json() as { releases: ListingReleaseBody[]; next_cursor: string };
      expect(first.releases).toHaveLength(50);
      expect(first.releases.map((release) => release.version).slice(0, 3)).toEqual([
        '1.1.0',
        '1.0.0',
        '0.0.49',
      ]);
      expect(first.releases.at(-1)!.version).toBe('0.0.2');
      expect(first.releases.at(-1)!.scan_report).toEqual({
        verdict: 'fail',
        findings: [{ check: 'limits', rule_id: 'file-count' }],
      });
      expect(first.next_cursor).toEqual(expect.any(String));

      // The public log pages the same releases with the same cursor, without the scan reports, each
      // linking its attestation (the attestation route serves published listings only) and marking
      // the one version on sale.
      const publicFirst = (
        await t.app.inject({ url: `/api/v/${listing.owner}/${listing.slug}/releases` })
      ).json();
      expect(publicFirst.next_cursor).toBe(first.next_cursor);
      expect(publicFirst.releases).toEqual(
        first.releases.map(({ scan_report: _report, ...release }) => ({
          ...release,
          on_sale: release.version === '1.0.0',
          attestation_url: `${t.config.baseUrl}/api/v/${listing.owner}/${listing.slug}/releases/${release.version}/attestation`,
        })),
      );

      const second = await ownLog(`?cursor=${first.next_cursor}`);
      expect(second.statusCode, second.body).toBe(200);
      expect(second.json()).toMatchObject({
        releases: [{ version: '0.0.1', scan: 'fail' }],
        next_cursor: null,
      });

      const retire = await t.app.inject({
        method: 'DELETE',
        url: `/api/listings/${listing.id}`,
        headers: bearer(alice.apiKey),
      });
      expect(retire.statusCode, retire.body).toBe(200);
      const retired = await ownLog();
      expect(retired.statusCode, retired.body).toBe(200);
      expect(retired.json()).toEqual(first);
    });

    it('is an empty page for a listing with no release yet', async () => {
      const res = await ownLog();
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ releases: [], next_cursor: null });
    });
  });

  describe('errors', () => {
    it('answers 400 invalid_request to a cursor this API did not return, and to an unknown query field', async () => {
      for (const cursor of ['nope', 'eyJ2IjoiMS4wIn0', `${'A'.repeat(513)}`, 'a%00b']) {
        const res = await ownLog(`?cursor=${cursor}`);
        expectError(res, 400, 'invalid_request');
        expect(res.json().details.issues).toContainEqual(expect.objectContaining({ field: 'cursor' }));
        expect(res.headers['cache-control']).toContain('no-store');
      }
      expectError(await ownLog('?limit=10'), 400, 'invalid_request');
    });

    it('answers 404 not_found to an unknown id and 400 invalid_request to an id that is no uuid', async () => {
      expectError(await ownLog('', alice.apiKey, '00000000-0000-4000-8000-000000000000'), 404, 'not_found');
      const malformed = await ownLog('', alice.apiKey, 'not-a-uuid');
      expectError(malformed, 400, 'invalid_request');
      expect(malformed.json().details.issues).toContainEqual(expect.objectContaining({ field: 'id' }));
    });
  });

  describe('security', () => {
    it('answers 401 invalid_key without a key, before looking at the query', async () => {
      const res = await t.app.inject({ url: `/api/listings/${listing.id}/releases?cursor=nope` });
      expectError(res, 401, 'invalid_key');
      expect(res.json().details).toBeUndefined();
    });

    it("answers another creator's listing exactly as an unknown one: 404 not_found", async () => {
      await cutAndWait('1.0.0');
      const bob = await registerCreator(t);
      const theirs = await ownLog('', bob.apiKey);
      const unknown = await ownLog('', bob.apiKey, '00000000-0000-4000-8000-000000000000');
      expectError(theirs, 404, 'not_found');
      expect(theirs.json()).toEqual(unknown.json());
      expect(theirs.body).not.toContain('1.0.0');
    });

    it('answers 403 insufficient_scope to a key without listings:read', async () => {
      const narrow = await issueApiKey(t.ctx.database.db, {
        creatorId: alice.id,
        kind: 'agent',
        at: t.clock.now(),
        scopes: ['listings:write', 'releases:write'],
      });
      expectError(await ownLog('', narrow.apiKey), 403, 'insufficient_scope');
    });
  });
});
