import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { VERSIONS_SOLD } from '../../src/platform/errors.js';
import { SITE_LINKS } from '../../src/platform/http/discovery-links.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { PAGE_COMPUTED, PAGE_SCAN, publishedListingFixture } from '../support/listings.js';

describe('GET /{owner}/{slug}', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(() => t.close());

  it('renders the manifest server-side with price, version, scan, tree, README, log and buy steps', async () => {
    const f = await publishedListingFixture(t, {
      priceMicro: 9_500_000n,
      updatePriceMicro: 1_000_000n,
      description: 'Ships release notes for you',
      triggerHint: 'When a tag is pushed',
      releases: [
        { version: '1.0.0', computed: PAGE_COMPUTED, scan: PAGE_SCAN },
        { version: '1.1.0', verdict: 'fail' },
      ],
    });
    const res = await t.app.inject({ method: 'GET', url: `/${f.owner}/${f.slug}` });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/html');
    expect(res.headers.link).toBe(SITE_LINKS);
    expect(res.headers['content-security-policy']).toContain("default-src 'none'");
    const html = res.body;
    // What is sold, in words, and which row of the log it is.
    expect(html).toContain('On sale: version <code>1.0.0</code>.');
    expect(html).toContain(VERSIONS_SOLD);
    expect(html).toMatch(/<code>1\.0\.0<\/code><span class="badge ok">on sale<\/span>/);
    expect(html).not.toMatch(/<code>1\.1\.0<\/code><span class="badge ok">on sale/);
    for (const text of [
      'Ships release notes for you',
      'When a tag is pushed',
      '$9.50',
      'Updates $1.00 each',
      '1.0.0',
      '0 blocking · 2 disclosed · 1 for review',
      'Runs git; reads GITHUB_TOKEN',
      'src/index.ts',
      '<h1>Fixture tool</h1>',
      'TypeScript',
      'skill × 2',
      `${t.config.baseUrl}/api/r/${f.owner}/${f.slug}`,
      `${t.config.baseUrl}/api/mcp`,
      '/.well-known/agent-skills/buy-a-repo/SKILL.md',
    ]) {
      expect(html, text).toContain(text);
    }
    // The failing 1.1.0 is in the log excerpt, while 1.0.0 stays the version on sale.
    expect(html).toMatch(/<code>1\.1\.0<\/code>.*badge bad/s);
    expect(html).not.toContain('id="retired"');
  });

  it('says in words what the scan could not check: stale advisory data, no lockfile', async () => {
    const f = await publishedListingFixture(t, {
      releases: [
        {
          version: '1.0.0',
          computed: { ...PAGE_COMPUTED, warnings: ['advisories_stale', 'no_lockfile'] },
          scan: PAGE_SCAN,
        },
      ],
    });
    const html = (await t.app.inject({ method: 'GET', url: `/${f.owner}/${f.slug}` })).body;
    expect(html).toContain('id="warnings"');
    expect(html).toMatch(/advisory data behind the dependency checks is more than \d+ days old/);
    expect(html).toContain('declared without a lockfile, so their versions are unknown');
  });

  it('shows file names with hidden characters escaped, so a zero-width character cannot hide', async () => {
    const f = await publishedListingFixture(t, {
      releases: [
        { version: '1.0.0', files: { 'README.md': '# Tool\n', 'src/ma\u200bin.ts': 'export {};\n' } },
      ],
    });
    const res = await t.app.inject({ method: 'GET', url: `/${f.owner}/${f.slug}` });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('<code>src/ma\\u200bin.ts</code>');
    expect(res.body).not.toContain('ma\u200bin.ts');
  });

  it('marks a retired listing as no longer sold; says Free and updates included when so', async () => {
    const f = await publishedListingFixture(t, { status: 'retired', priceMicro: 0n, updatePriceMicro: 0n });
    const res = await t.app.inject({ method: 'GET', url: `/${f.owner}/${f.slug}` });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('No longer sold');
    expect(res.body).toContain('Free');
    expect(res.body).toContain('Updates included');
  });

  it('is 404 with the error body for drafts and unknown listings', async () => {
    const draft = await publishedListingFixture(t, { status: 'draft' });
    for (const url of [`/${draft.owner}/${draft.slug}`, '/nobody/nothing']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe('not_found');
    }
  });

  it('escapes self-reported text', async () => {
    const f = await publishedListingFixture(t, {
      description: '<script>alert(1)</script>',
      triggerHint: '<img src=x onerror=alert(1)>',
    });
    const res = await t.app.inject({ method: 'GET', url: `/${f.owner}/${f.slug}` });
    expect(res.body).not.toContain('<script>alert(1)</script>');
    expect(res.body).not.toContain('<img src=x');
    expect(res.body).toContain('&lt;script>');
  });
});
