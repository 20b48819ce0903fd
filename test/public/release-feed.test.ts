import { parseFeed } from '@rowanmanning/feed-parser';
import { sql } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { BACKENDS } from '../support/db.js';
import { publishedListingFixture } from '../support/listings.js';

describe.each(BACKENDS)('GET /{owner}/{slug}/releases.atom (%s)', (backend) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({ backend });
  });
  afterEach(() => t.close());

  it('is the release log as Atom: a feed parser reads three releases, the failing one too, as the log lists them', async () => {
    const f = await publishedListingFixture(t, {
      updatePriceMicro: 2_500_000n,
      releases: [
        { version: '1.0.0' },
        { version: '1.1.0', verdict: 'fail', files: { 'README.md': '# fixture\n\nSecond.\n' } },
        {
          version: '1.2.0',
          files: { 'README.md': '# fixture\n\nThird.\n', 'src/a.js': 'export const a = 1;\n' },
        },
      ],
    });
    const res = await t.app.inject({ method: 'GET', url: `/${f.owner}/${f.slug}/releases.atom` });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/atom+xml; charset=utf-8');
    expect(res.headers['cache-control']).toBe('public, max-age=60');
    expect(res.headers.etag).toMatch(/^"[A-Za-z0-9_-]+"$/);

    const log = (
      await t.app.inject({ method: 'GET', url: `/api/v/${f.owner}/${f.slug}/releases` })
    ).json() as {
      releases: Array<{
        version: string;
        changelog: string;
        scan: string;
        published_at: string;
        attestation_url?: string;
        diff_summary: { files_added: number } | null;
      }>;
    };
    const feed = parseFeed(res.body);
    expect(feed.meta.type).toBe('atom');
    expect(feed.title).toBe(`${f.owner}/${f.slug} releases`);
    expect(feed.self).toBe(`${t.config.baseUrl}/${f.owner}/${f.slug}/releases.atom`);
    expect(feed.items).toHaveLength(3);
    expect(log.releases.map((release) => release.version)).toEqual(['1.2.0', '1.1.0', '1.0.0']);
    for (const [index, release] of log.releases.entries()) {
      const item = feed.items[index]!;
      expect(item.id).toBe(`${t.config.baseUrl}/${f.owner}/${f.slug}#release-${release.version}`);
      expect(item.title).toContain(release.version);
      expect(item.title).toContain(release.scan === 'pass' ? 'scan passed' : 'scan failed');
      expect(item.published?.toISOString()).toBe(release.published_at);
      expect(item.url).toBe(release.attestation_url);
      expect(item.content).toContain(release.changelog);
      expect(item.content).toContain(`Scan verdict: <strong>${release.scan}</strong>`);
      expect(item.content).toContain(`${release.diff_summary!.files_added} files added`);
      expect(item.content).toContain(`href="${release.attestation_url}"`);
      expect(item.content).toContain('update price 2.50 USDC');
    }
    expect(feed.items[1]!.title).toContain('not sold');

    // Cacheable like the other public documents: the same ETag answers 304.
    const again = await t.app.inject({
      method: 'GET',
      url: `/${f.owner}/${f.slug}/releases.atom`,
      headers: { 'if-none-match': res.headers.etag as string },
    });
    expect(again.statusCode).toBe(304);
  });

  it('is linked from the manifest page and from the JSON release log', async () => {
    const f = await publishedListingFixture(t);
    const feedUrl = `${t.config.baseUrl}/${f.owner}/${f.slug}/releases.atom`;
    const page = await t.app.inject({ method: 'GET', url: `/${f.owner}/${f.slug}` });
    expect(page.body).toContain(
      `<link rel="alternate" type="application/atom+xml" href="${feedUrl}" title="${f.owner}/${f.slug} releases (Atom)"/>`,
    );
    expect(page.body).toContain(`<a href="${feedUrl}" type="application/atom+xml">release feed</a>`);
    const log = await t.app.inject({ method: 'GET', url: `/api/v/${f.owner}/${f.slug}/releases` });
    expect(log.headers.link).toBe(`<${feedUrl}>; rel="alternate"; type="application/atom+xml"`);
  });

  it('escapes a changelog: markup in it is text in the entry, never markup', async () => {
    const f = await publishedListingFixture(t);
    await t.ctx.database.db.execute(
      // A tag message is the creator's text: anything may be in it.
      sql`update releases set changelog = ${'<script>alert(1)</script> & ]]> more'} where listing_id = ${f.listingId}`,
    );
    t.ctx.listingEvents.announce(f.owner, f.slug);
    const res = await t.app.inject({ method: 'GET', url: `/${f.owner}/${f.slug}/releases.atom` });
    // The entry's HTML (inside CDATA) carries the text escaped; the parser decodes it back to the text.
    expect(res.body).toContain('&lt;script>alert(1)&lt;/script> &amp; ]]');
    expect(res.body).not.toContain('<script>');
    expect(parseFeed(res.body).items[0]!.content).toContain('<script>alert(1)</script> & ]]> more');
  });

  it('is 404 for drafts, unknown listings and reserved first segments', async () => {
    const draft = await publishedListingFixture(t, { status: 'draft' });
    for (const url of [`/${draft.owner}/${draft.slug}/releases.atom`, '/nobody/nothing/releases.atom']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe('not_found');
    }
    const reserved = await t.app.inject({ method: 'GET', url: '/api/x/releases.atom' });
    expect(reserved.statusCode).toBe(404);
  });

  it('keeps a retired listing’s feed', async () => {
    const f = await publishedListingFixture(t, { status: 'retired' });
    const res = await t.app.inject({ method: 'GET', url: `/${f.owner}/${f.slug}/releases.atom` });
    expect(res.statusCode).toBe(200);
    expect(parseFeed(res.body).items).toHaveLength(1);
  });
});
