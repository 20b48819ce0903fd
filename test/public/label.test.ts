import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { BACKENDS } from '../support/db.js';
import { patchListingFixture, publishedListingFixture } from '../support/listings.js';

describe.each(BACKENDS)('GET /api/label/{owner}/{slug} (%s)', (backend) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({ backend });
  });
  afterEach(() => t.close());

  it('serves the manifest of the latest passing release, computed and self-reported apart', async () => {
    const f = await publishedListingFixture(t, {
      priceMicro: 9_000_000n,
      updatePriceMicro: 0n,
      releases: [
        { version: '1.0.0', computed: { file_count: 1 } },
        { version: '1.1.0', computed: { file_count: 2 } },
        { version: '1.2.0', verdict: 'fail' },
      ],
    });
    const res = await t.app.inject({ method: 'GET', url: `/api/label/${f.owner}/${f.slug}` });
    expect(res.statusCode).toBe(200);
    const manifest = res.json();
    expect(manifest).toMatchObject({
      owner: f.owner,
      slug: f.slug,
      channel: `${f.owner}/${f.slug}`,
      version: '1.1.0',
      price_micro: '9000000',
      update_price_micro: '0',
      resource_endpoint: `${t.config.baseUrl}/api/r/${f.owner}/${f.slug}`,
      version_url: `${t.config.baseUrl}/api/v/${f.owner}/${f.slug}`,
      // "Latest" is defined where it is used, and the log listing the failing 1.2.0 is linked.
      release_log: {
        url: `${t.config.baseUrl}/api/v/${f.owner}/${f.slug}/releases`,
        on_sale: expect.stringContaining('newest release (highest X.Y.Z) whose scan passed'),
        cadence_counts: expect.stringContaining('computed.cadence.releases counts'),
      },
      self_reported: { description: 'A fixture listing', trigger_hint: 'Use it when testing' },
    });
    expect(manifest.computed.file_count).toBe(2);
    expect(manifest.computed.scan.verdict).toBe('pass');
    expect(manifest.artifact_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(manifest.self_reported).not.toHaveProperty('file_count');
    expect(res.headers['cache-control']).toContain('public');
    expect(res.headers.etag).toMatch(/^"[^"]+"$/);
  });

  it('answers 304 to a matching If-None-Match and a new ETag after a price change', async () => {
    const f = await publishedListingFixture(t);
    const url = `/api/label/${f.owner}/${f.slug}`;
    const first = await t.app.inject({ method: 'GET', url });
    const etag = first.headers.etag as string;
    const again = await t.app.inject({ method: 'GET', url, headers: { 'if-none-match': etag } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    await patchListingFixture(t, f.listingId, { priceMicro: 2_000_000n });
    const changed = await t.app.inject({ method: 'GET', url, headers: { 'if-none-match': etag } });
    expect(changed.statusCode).toBe(200);
    expect(changed.headers.etag).not.toBe(etag);
    expect(changed.json().price_micro).toBe('2000000');
  });

  it('keeps a retired listing readable, marked retired', async () => {
    const f = await publishedListingFixture(t, { status: 'retired' });
    const res = await t.app.inject({ method: 'GET', url: `/api/label/${f.owner}/${f.slug}` });
    expect(res.statusCode).toBe(200);
    expect(res.json().status).toBe('retired');
  });

  it('is 404 for drafts, unknown names, listings without a passing release, and junk names', async () => {
    const draft = await publishedListingFixture(t, { status: 'draft' });
    const failing = await publishedListingFixture(t, { releases: [{ version: '1.0.0', verdict: 'fail' }] });
    for (const url of [
      `/api/label/${draft.owner}/${draft.slug}`,
      `/api/label/${failing.owner}/${failing.slug}`,
      `/api/label/${draft.owner}/nope`,
      '/api/label/..%2F..%2Fetc/passwd',
      `/api/label/${'a'.repeat(80)}/x`,
    ]) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(404);
      expect(res.json().code, url).toBe('not_found');
    }
  });
});
