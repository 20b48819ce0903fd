import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/identity/api-keys.js';
import { cutJob } from '../../src/releases/jobs.js';
import { findRelease } from '../../src/releases/store.js';
import { bearer, expectError, type RegisteredCreator, registerCreator } from '../identity/support.js';
import { type CreatedListing, createHostedListing, type SshKey, sshKeygen } from '../listings/support.js';
import { commitFile, eventually, workRepo } from '../releases/support.js';
import { SECRET_SAMPLES } from '../scan/secret-samples.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { PGLITE_ONLY } from '../support/db.js';
import { publishedListingFixture } from '../support/listings.js';

/**
 * GET /api/listings/{id}/manifest: the manifest buyers see, for the creator. The happy path cuts
 * real releases (tags pushed into the listing's repository, then sync) through the real
 * inspection: a clean one that passes and a newer one holding a secret that fails.
 */

let key: SshKey;
beforeAll(async () => {
  key = await sshKeygen('ed25519');
});

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

describe.each(PGLITE_ONLY)('GET /api/listings/{id}/manifest on %s', (backend) => {
  let t: TestApp;
  let alice: RegisteredCreator;

  beforeEach(async () => {
    t = await createTestApp({ backend, jobs: [cutJob] });
    alice = await registerCreator(t);
  });
  afterEach(async () => {
    await t.close();
  });

  const manifestOf = (id: string, apiKey = alice.apiKey) =>
    t.app.inject({ url: `/api/listings/${id}/manifest`, headers: bearer(apiKey) });

  describe('happy', () => {
    let listing: CreatedListing;
    let work: Awaited<ReturnType<typeof workRepo>>;
    beforeEach(async () => {
      listing = await createHostedListing(t, alice.apiKey, key.publicKey, {
        price_micro: '4000000',
        update_price_micro: '0',
        description: 'Release notes from commits',
        trigger_hint: 'When you cut a release',
      });
      work = await workRepo();
    });

    const bare = () => path.join(t.dataDir, 'repos', listing.owner, `${listing.slug}.git`);
    const cutAndWait = async (version: string) => {
      await work.git('tag', `v${version}`);
      await work.git('push', '-q', bare(), 'main', '--tags');
      const sync = await t.app.inject({
        method: 'POST',
        url: `/api/listings/${listing.id}/sync`,
        headers: bearer(alice.apiKey),
        payload: { version },
      });
      expect(sync.statusCode, sync.body).toBe(202);
      return eventually(async () => {
        const row = await findRelease(t.ctx.database.db, listing.id, version);
        return row && row.verdict !== 'pending' ? row : undefined;
      }, 90_000);
    };

    it("shows a draft's manifest at its latest passing release, byte for byte what the label serves once published", {
      timeout: 180_000,
    }, async () => {
      await commitFile(work, 'README.md', '# Release notes\n\nTurns commits into release notes.\n', 'Readme');
      await commitFile(work, 'src/notes.js', 'export const notes = (log) => log.join("\\n");\n', 'Code');
      expect((await cutAndWait('1.0.0')).verdict).toBe('pass');
      await commitFile(
        work,
        'src/config.js',
        `export const token = '${SECRET_SAMPLES['github-token']!.positive}';\n`,
        'Config',
      );
      expect((await cutAndWait('1.1.0')).verdict).toBe('fail');

      const draft = await manifestOf(listing.id);
      expect(draft.statusCode, draft.body).toBe(200);
      expect(draft.headers['cache-control']).toBe('private, no-store');
      expect(draft.headers.etag).toMatch(/^"[^"]+"$/);
      const manifest = draft.json();
      expect(manifest).toMatchObject({
        owner: listing.owner,
        slug: listing.slug,
        channel: `${listing.owner}/${listing.slug}`,
        // As buyers will see it: the manifest describes the listing on sale.
        status: 'published',
        version: '1.0.0',
        price_micro: '4000000',
        update_price_micro: '0',
        resource_endpoint: `${t.config.baseUrl}/api/r/${listing.owner}/${listing.slug}`,
        version_url: `${t.config.baseUrl}/api/v/${listing.owner}/${listing.slug}`,
        self_reported: { description: 'Release notes from commits', trigger_hint: 'When you cut a release' },
      });
      expect(manifest.artifact_sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(manifest.computed.file_count).toBe(2);
      expect(manifest.computed.readme_html).toContain('Release notes');
      expect(manifest.computed.scan.verdict).toBe('pass');
      // Nothing of the failing release, whose secret's place is in its scan_report only.
      expect(draft.body).not.toContain('src/config.js');
      // A draft is still not readable by name.
      expectError(
        await t.app.inject({ url: `/api/label/${listing.owner}/${listing.slug}` }),
        404,
        'not_found',
      );

      const publish = await t.app.inject({
        method: 'POST',
        url: `/api/listings/${listing.id}/publish`,
        headers: bearer(alice.apiKey),
      });
      expect(publish.statusCode, publish.body).toBe(200);
      const label = await t.app.inject({ url: `/api/label/${listing.owner}/${listing.slug}` });
      expect(label.statusCode, label.body).toBe(200);
      expect(label.body).toBe(draft.body);
      expect(label.headers.etag).toBe(draft.headers.etag);
      const published = await manifestOf(listing.id);
      expect(published.body).toBe(label.body);
      expect(published.headers['cache-control']).toBe('private, no-store');

      // A price change shows at once, and equals the label again.
      const patch = await t.app.inject({
        method: 'PATCH',
        url: `/api/listings/${listing.id}`,
        headers: bearer(alice.apiKey),
        payload: { price_micro: '5000000' },
      });
      expect(patch.statusCode, patch.body).toBe(200);
      const repriced = await manifestOf(listing.id);
      expect(repriced.json().price_micro).toBe('5000000');
      expect(repriced.body).toBe(
        (await t.app.inject({ url: `/api/label/${listing.owner}/${listing.slug}` })).body,
      );

      // Retired: the label's document, marked no longer sold.
      const retire = await t.app.inject({
        method: 'DELETE',
        url: `/api/listings/${listing.id}`,
        headers: bearer(alice.apiKey),
      });
      expect(retire.statusCode, retire.body).toBe(200);
      const retired = await manifestOf(listing.id);
      expect(retired.statusCode, retired.body).toBe(200);
      expect(retired.json()).toMatchObject({ status: 'retired', version: '1.0.0' });
      expect(retired.body).toBe(
        (await t.app.inject({ url: `/api/label/${listing.owner}/${listing.slug}` })).body,
      );
    });
  });

  describe('errors', () => {
    it('answers 404 not_found, saying no release passes yet, for a listing with none or only failing ones', async () => {
      const empty = await publishedListingFixture(t, { creator: alice, status: 'draft', releases: [] });
      const failing = await publishedListingFixture(t, {
        creator: alice,
        status: 'draft',
        releases: [{ version: '1.0.0', verdict: 'fail' }],
      });
      for (const id of [empty.listingId, failing.listingId]) {
        const res = await manifestOf(id);
        expectError(res, 404, 'not_found');
        expect(res.json().message).toMatch(/no release .*passes/i);
        expect(res.headers['cache-control']).toContain('no-store');
      }
    });

    it('answers 409 listing_not_ready naming the price when a draft has none yet (the manifest shows it)', async () => {
      const draft = await publishedListingFixture(t, { creator: alice, status: 'draft' });
      await t.database.query('update listings set price_micro = null where id = $1', [draft.listingId]);
      const res = await manifestOf(draft.listingId);
      expectError(res, 409, 'listing_not_ready');
      expect(res.json().details).toEqual({ blocking: ['price'] });
    });

    it('answers 404 not_found to an unknown id and 400 invalid_request to an id that is no uuid', async () => {
      expectError(await manifestOf(UNKNOWN_ID), 404, 'not_found');
      const malformed = await manifestOf('not-a-uuid');
      expectError(malformed, 400, 'invalid_request');
      expect(malformed.json().details.issues).toContainEqual(expect.objectContaining({ field: 'id' }));
    });
  });

  describe('security', () => {
    it('answers 401 invalid_key without a key', async () => {
      const f = await publishedListingFixture(t, { creator: alice });
      const res = await t.app.inject({ url: `/api/listings/${f.listingId}/manifest` });
      expectError(res, 401, 'invalid_key');
      expect(res.json().details).toBeUndefined();
    });

    it("answers another creator's listing exactly as an unknown one, published or not: 404 not_found", async () => {
      const bob = await registerCreator(t);
      const unknown = (await manifestOf(UNKNOWN_ID, bob.apiKey)).json();
      for (const status of ['published', 'draft'] as const) {
        const f = await publishedListingFixture(t, { creator: alice, status });
        const res = await manifestOf(f.listingId, bob.apiKey);
        expectError(res, 404, 'not_found');
        expect(res.json()).toEqual(unknown);
      }
    });

    it('answers 403 insufficient_scope to a key without listings:read', async () => {
      const f = await publishedListingFixture(t, { creator: alice });
      const narrow = await issueApiKey(t.ctx.database.db, {
        creatorId: alice.id,
        kind: 'agent',
        at: t.clock.now(),
        scopes: ['listings:write', 'releases:write'],
      });
      expectError(await manifestOf(f.listingId, narrow.apiKey), 403, 'insufficient_scope');
    });
  });
});
