import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { markSourceState } from '../../src/listings/service.js';
import { insertListing } from '../../src/listings/store.js';
import { SITE_LINKS } from '../../src/platform/http/discovery-links.js';
import { parseVersion } from '../../src/platform/versions.js';
import { insertRelease } from '../../src/releases/store.js';
import {
  newWallet,
  type RegisteredCreator,
  registerCreator,
  walletSignatureHeader,
} from '../identity/support.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { BACKENDS } from '../support/db.js';
import { patchListingFixture } from '../support/listings.js';

/**
 * The home page's listings (newest, most bought, search) and its limits. Listings here are rows
 * alone (a release row with an artifact key and no zip): the page reads nothing else, and a
 * catalogue of more than a page of them must stay cheap to build.
 */
describe.each(BACKENDS)('GET / on %s', (backend) => {
  let t: TestApp;
  let creator: RegisteredCreator;
  beforeEach(async () => {
    t = await createTestApp({ backend });
    creator = await registerCreator(t);
  });
  afterEach(() => t.close());

  /** TEST FIXTURE: a listing and its releases as rows, published a minute after the previous one. */
  async function listing(
    slug: string,
    options: {
      priceMicro?: bigint | null;
      updatePriceMicro?: bigint;
      description?: string;
      status?: 'draft' | 'published' | 'retired';
      releases?: Array<{ version: string; verdict: 'pass' | 'fail' | 'pending'; flagged?: boolean }>;
    } = {},
  ) {
    t.clock.advance(60_000);
    const now = t.clock.now();
    const row = (await insertListing(t.ctx.database.db, {
      creatorId: creator.id,
      owner: creator.handle,
      slug,
      source: 'hosted',
      status: options.status ?? 'published',
      priceMicro: options.priceMicro === undefined ? 1_000_000n : options.priceMicro,
      updatePriceMicro: options.updatePriceMicro ?? 0n,
      description: options.description ?? `The ${slug} listing`,
      triggerHint: 'when testing',
      createdAt: now,
      publishedAt: options.status === 'draft' ? null : now,
    }))!;
    for (const release of options.releases ?? [{ version: '1.0.0', verdict: 'pass' }]) {
      await addRelease(row.id, release.version, release.verdict, release.flagged);
    }
    t.ctx.listingEvents.announce(row.owner, row.slug);
    return row;
  }

  async function addRelease(
    listingId: string,
    version: string,
    verdict: 'pass' | 'fail' | 'pending',
    flagged = false,
  ) {
    const sha = randomBytes(32).toString('hex');
    await insertRelease(t.ctx.database.db, {
      listingId,
      version,
      ...parseVersion(version)!,
      tag: `v${version}`,
      commitSha: randomBytes(20).toString('hex'),
      artifactKey: `artifacts/sha256/${sha}.zip`,
      artifactSha256: sha,
      sizeBytes: 100,
      publishedAt: t.clock.now(),
      changelog: `Release ${version}`,
      verdict,
      // What the advisory re-check writes when later advisory data matches the release.
      ...(flagged
        ? {
            advisoryFlag: { advisory_ids: ['GHSA-test'], findings: [] },
            advisoryFlaggedAt: t.clock.now(),
          }
        : {}),
    });
  }

  /** A wallet takes the listing's version on sale at its current (zero) price: a real free grant. */
  async function claim(slug: string, wallet = newWallet()) {
    const res = await t.app.inject({
      url: `/api/r/${creator.handle}/${slug}`,
      headers: { 'x-wallet-signature': await walletSignatureHeader(t, wallet) },
    });
    expect(res.statusCode, res.body).toBe(200);
    return wallet;
  }

  const get = (url: string) => t.app.inject({ url });
  /** The listings of one section (or of the whole page), by name, in order. */
  function shown(html: string, section?: string): string[] {
    const part = section ? html.slice(html.indexOf(`id="${section}"`)).split('</section>')[0]! : html;
    return [...part.matchAll(/data-listing="[^/"]+\/([^"]+)"/g)].map((match) => match[1]!);
  }
  /** One listing's entry. */
  function entry(html: string, slug: string): string {
    return html.slice(html.indexOf(`data-listing="${creator.handle}/${slug}"`)).split('</li>')[0]!;
  }

  it('links the guides and shows the newest and the most bought, each with price, version, verdict, advisory flag and buyers', async () => {
    const oldest = await listing('oldest-tool', { priceMicro: 0n });
    const middle = await listing('middle-tool', { priceMicro: 0n, updatePriceMicro: 1_000_000n });
    await listing('newest-tool', {
      priceMicro: 1_234_567n,
      releases: [{ version: '1.0.0', verdict: 'pass', flagged: true }],
    });
    // Buyers are wallets, not purchases: oldest-tool has three, middle-tool one (whose update is
    // a second purchase by the same wallet), newest-tool none.
    for (let i = 0; i < 3; i++) await claim('oldest-tool');
    const holder = await claim('middle-tool');
    await addRelease(middle.id, '1.1.0', 'pass');
    await patchListingFixture(t, middle.id, { updatePriceMicro: 0n });
    await claim('middle-tool', holder);
    await patchListingFixture(t, oldest.id, { priceMicro: 9_500_000n });

    const res = await get('/');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['cache-control']).toBe('public, max-age=60');
    expect(res.headers.link).toBe(SITE_LINKS);
    const csp = res.headers['content-security-policy'] as string;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("form-action 'self'");
    expect(csp).not.toContain('script-src');
    const html = res.body;
    expect(html).toContain('href="/docs/buying"');
    expect(html).toContain('href="/docs/selling"');
    // Creators find the app from the first screen: a way in named for what they came to do.
    expect(html).toMatch(/<a [^>]*href="\/app"[^>]*>Sell your code<\/a>/);
    expect(html.indexOf('href="/app"')).toBeLessThan(html.indexOf('id="newest"'));
    expect(html).toMatch(/<form[^>]*method="get"[^>]*action="\/"/);
    expect(html).not.toContain('<script');

    expect(shown(html, 'newest')).toEqual(['newest-tool', 'middle-tool', 'oldest-tool']);
    expect(shown(html, 'most-bought')).toEqual(['oldest-tool', 'middle-tool', 'newest-tool']);
    const oldestEntry = entry(html, 'oldest-tool');
    expect(oldestEntry).toContain(`href="/${creator.handle}/oldest-tool"`);
    expect(oldestEntry).toContain('data-price-micro="9500000">$9.50<');
    expect(oldestEntry).toContain('<code>1.0.0</code>');
    expect(oldestEntry).toMatch(/class="badge ok">pass</);
    expect(oldestEntry).toContain('3 buyers');
    expect(entry(html, 'middle-tool')).toContain('data-price-micro="0">Free<');
    expect(entry(html, 'middle-tool')).toContain('<code>1.1.0</code>');
    expect(entry(html, 'middle-tool')).toContain('1 buyer<');
    expect(entry(html, 'newest-tool')).toContain('$1.234567');
    expect(entry(html, 'newest-tool')).toContain('0 buyers');
    // A release that advisories published after its scan match is shown flagged beside its verdict.
    expect(entry(html, 'newest-tool')).toMatch(/class="badge bad"[^>]*>flagged</);
    expect(oldestEntry).not.toContain('flagged');
  });

  it('never shows drafts, retired, unpriced, unreachable or never-passing listings, nor a failing newer release', async () => {
    await listing('on-sale', {
      releases: [
        { version: '1.0.0', verdict: 'pass' },
        { version: '1.1.0', verdict: 'fail' },
        { version: '1.2.0', verdict: 'pending' },
      ],
    });
    await listing('a-draft', { status: 'draft' });
    await listing('retired-one', { status: 'retired' });
    await listing('no-price', { priceMicro: null });
    await listing('only-failing', { releases: [{ version: '1.0.0', verdict: 'fail' }] });
    const gone = await listing('source-gone');
    await markSourceState(t.ctx, [gone], 'unreachable', 'The GitHub App was uninstalled');

    for (const url of ['/', '/?sort=newest', '/?sort=most_bought', `/?q=${creator.handle}`]) {
      const html = (await get(url)).body;
      expect(new Set(shown(html)), url).toEqual(new Set(['on-sale']));
    }
    expect(entry((await get('/')).body, 'on-sale')).toContain('<code>1.0.0</code>');
  });

  it('searches names and descriptions: every word, any case, wildcards taken literally', async () => {
    await listing('changelog-writer', { description: 'Writes CHANGELOG.md from commits' });
    await listing('release-notes', { description: 'Release notes, 100% from tags' });
    await listing('lint-kit', { description: 'Lints_everything in one pass' });
    const search = async (q: string) => {
      const res = await get(`/?q=${encodeURIComponent(q)}`);
      expect(res.statusCode, q).toBe(200);
      return res.body;
    };
    expect(shown(await search('changelog'))).toEqual(['changelog-writer']);
    expect(shown(await search('COMMITS writes'))).toEqual(['changelog-writer']);
    expect(shown(await search(`${creator.handle}/lint`))).toEqual(['lint-kit']);
    expect(shown(await search('100%'))).toEqual(['release-notes']);
    expect(shown(await search('%'))).toEqual(['release-notes']);
    expect(shown(await search('s_e'))).toEqual(['lint-kit']);
    expect(shown(await search('  notes   tags '))).toEqual(['release-notes']);
    expect(shown(await search('notes commits'))).toEqual([]);
    const none = await search('nothing-like-this');
    expect(none).toContain('No listing on sale matches “nothing-like-this”');
    // The search stays in the box and in the order links.
    expect(none).toContain('value="nothing-like-this"');
    expect(none).toContain('href="/?q=nothing-like-this&amp;sort=most_bought"');
    // An empty search is the home page.
    expect((await get('/?q=%20')).body).toContain('id="most-bought"');
  });

  it('orders and pages a list: 20 a page, next and previous links, most bought first on request', async () => {
    for (let i = 1; i <= 21; i++) await listing(`tool-${String(i).padStart(2, '0')}`, { priceMicro: 0n });
    await claim('tool-03');
    const first = (await get('/?sort=newest')).body;
    expect(shown(first)).toHaveLength(20);
    expect(shown(first)[0]).toBe('tool-21');
    expect(first).toContain('href="/?sort=newest&amp;page=2"');
    expect(first).not.toContain('Previous page');
    const second = (await get('/?sort=newest&page=2')).body;
    expect(shown(second)).toEqual(['tool-01']);
    expect(second).toContain('href="/?sort=newest">Previous page');
    expect(second).not.toContain('Next page');
    expect(shown((await get('/?page=3')).body)).toEqual([]);
    const bought = shown((await get('/?sort=most_bought')).body);
    expect(bought[0]).toBe('tool-03');
    expect(bought[1]).toBe('tool-21');
  });

  it('renders listing text inert: a description with markup is text, and so is the search echoed back', async () => {
    await listing('hostile-tool', {
      description: '<script>alert(1)</script><img src=x onerror="alert(2)"> "quoted" & more',
    });
    for (const url of [
      '/',
      `/?q=${encodeURIComponent('<script>')}`,
      `/?q=${encodeURIComponent('"><script>alert(3)</script>')}`,
    ]) {
      const html = (await get(url)).body;
      expect(html, url).not.toMatch(/<script|<img/i);
    }
    const html = (await get('/')).body;
    expect(html).toContain(
      '&lt;script>alert(1)&lt;/script>&lt;img src=x onerror=&quot;alert(2)&quot;> &quot;quoted&quot; &amp; more',
    );
    expect(shown((await get(`/?q=${encodeURIComponent('<script>')}`)).body)).toEqual(['hostile-tool']);
  });

  it('answers a query it cannot run with a page saying what to change (400), never a 500', async () => {
    const cases: Array<[string, string]> = [
      [`/?q=${'a'.repeat(101)}`, 'at most 100 characters and 8 words'],
      ['/?q=a+b+c+d+e+f+g+h+i', 'at most 100 characters and 8 words'],
      ['/?q=a%00b', 'plain text on one line'],
      ['/?q=a%0Ab', 'plain text on one line'],
      ['/?q=a&q=b', 'Give q once.'],
      ['/?sort=cheapest', 'Sort by newest or most_bought.'],
      ['/?page=0', 'Pages run from 1 to 50.'],
      ['/?page=51', 'Pages run from 1 to 50.'],
      ['/?page=1e3', 'Pages run from 1 to 50.'],
      ['/?page=-1', 'Pages run from 1 to 50.'],
    ];
    for (const [url, reason] of cases) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(400);
      expect(res.headers['content-type'], url).toBe('text/html; charset=utf-8');
      expect(res.headers['cache-control'], url).toBe('no-store');
      expect(res.body, url).toContain(reason);
      expect(res.body, url).toContain('<search><form');
    }
    // Whatever bytes a search carries, the answer is the page or the refusal page.
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 120 }), async (value) => {
        const q = [...Buffer.from(value)].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('');
        const res = await get(`/?q=${q}`);
        expect([200, 400], value).toContain(res.statusCode);
        expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      }),
      { numRuns: 40, seed: 17 },
    );
    for (const raw of ['%FF', '%ED%A0%80', '%C0%AF', '%']) {
      expect([200, 400], raw).toContain((await get(`/?q=${raw}`)).statusCode);
    }
    // The deepest page and the longest search are served.
    expect((await get('/?page=50')).statusCode).toBe(200);
    expect((await get(`/?q=${'a'.repeat(100)}`)).statusCode).toBe(200);
    // Parameters the page does not know are ignored (a tracking tag, say).
    expect((await get('/?utm_source=x')).statusCode).toBe(200);
  });
});

describe('unknown routes', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(() => t.close());

  it('says an unknown /api route does not exist, instead of looking for a listing named api/…', async () => {
    for (const [method, url] of [
      ['GET', '/api/nope'],
      ['GET', '/api/nope?x=1'],
      ['HEAD', '/api/nope'],
      ['POST', '/api/nope'],
      ['GET', '/api/label'],
      ['GET', '/api/nope/deeper'],
    ] as const) {
      const res = await t.app.inject({ method, url });
      expect(res.statusCode, url).toBe(404);
      if (method === 'HEAD') continue;
      const body = res.json();
      expect(body.code).toBe('not_found');
      expect(body.message).toBe(
        `No route for ${method} ${url.split('?')[0]}: this route does not exist; the API's routes are listed in ${t.config.baseUrl}/api/openapi.json`,
      );
      expect(body.docs_url).toBe(`${t.config.baseUrl}/docs/errors#not_found`);
    }
  });

  it("treats the service's own first segments as routes, and other names as listings", async () => {
    const docs = (await t.app.inject({ url: '/docs/nope' })).json();
    expect(docs).toMatchObject({
      code: 'not_found',
      message: 'No route for GET /docs/nope: this route does not exist',
    });
    const listing = (await t.app.inject({ url: '/someone/nothing' })).json();
    expect(listing).toMatchObject({ code: 'not_found', message: 'No listing someone/nothing' });
  });
});
