import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { publishedListingFixture } from '../support/listings.js';

/** What Chromium and Firefox send for a page they navigate to. */
const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';

describe('a page that cannot be shown, to a browser and to a program', () => {
  let t: TestApp;
  let draft: { owner: string; slug: string };
  beforeAll(async () => {
    t = await createTestApp();
    draft = await publishedListingFixture(t, { status: 'draft' });
  });
  afterAll(async () => t?.close());

  const get = (url: string, accept?: string) =>
    t.app.inject({ url, headers: accept === undefined ? {} : { accept } });

  /** The page's visible text, without its markup. */
  const words = (html: string) =>
    html
      .replace(/<head>.*<\/head>/s, '')
      .replace(/<[^>]+>/g, ' ')
      .replace(/\s+/g, ' ');

  it('tells a browser in words that a listing does not exist or is not published, with a 404 page', async () => {
    for (const url of ['/nobody-here/no-such-tool', `/${draft.owner}/${draft.slug}`]) {
      const res = await get(url, BROWSER);
      expect(res.statusCode, url).toBe(404);
      expect(res.headers['content-type'], url).toBe('text/html; charset=utf-8');
      expect(res.headers['cache-control'], url).toBe('no-store');
      expect(res.headers.vary, url).toContain('Accept');
      const csp = String(res.headers['content-security-policy']);
      expect(csp, url).toContain("default-src 'none'");
      expect(csp, url).not.toContain('script-src');
      expect(res.headers['x-content-type-options'], url).toBe('nosniff');
      const html = res.body;
      expect(html, url).toMatch(/^<!doctype html>/);
      // The site's own look: its header, stylesheet and footer.
      expect(html, url).toContain('class="site-header"');
      expect(html, url).toContain('href="/static/site.css"');
      const text = words(html);
      expect(text, url).toContain(`Nothing is for sale as ${url.slice(1)}`);
      expect(text, url).toMatch(/not published/);
      // Where to go instead: home and the listings on sale.
      expect(html, url).toContain('href="/"');
      expect(html, url).toContain('href="/?sort=newest"');
      // A person reads words: no code, no JSON, no field names.
      expect(text, url).not.toMatch(/not_found|docs_url|"code"|\{/);
    }
  });

  it('tells a browser an address leads nowhere, for unknown paths and unknown guides', async () => {
    for (const url of [
      '/no-such-page',
      '/docs/no-such-guide',
      '/docs/no-such-guide.md',
      '/a/b/c',
      '/app.js',
    ]) {
      const res = await get(url, BROWSER);
      expect(res.statusCode, url).toBe(404);
      expect(res.headers['content-type'], url).toBe('text/html; charset=utf-8');
      const text = words(res.body);
      expect(text, url).toContain('There is no page at this address');
      expect(res.body, url).toContain('href="/"');
      expect(res.body, url).toContain('href="/?sort=newest"');
      expect(res.body, url).toContain('href="/docs"');
      expect(text, url).not.toMatch(/not_found|No route for/);
    }
  });

  it('answers programs with the error body exactly as before: no Accept, */*, JSON, markdown', async () => {
    const cases: Array<[string, string]> = [
      ['/nobody-here/no-such-tool', 'No listing nobody-here/no-such-tool'],
      [`/${draft.owner}/${draft.slug}`, `No listing ${draft.owner}/${draft.slug}`],
      ['/no-such-page', 'No route for GET /no-such-page: this route does not exist'],
      ['/docs/no-such-guide', 'No route for GET /docs/no-such-guide: this route does not exist'],
    ];
    for (const [url, message] of cases) {
      for (const accept of [
        undefined,
        '*/*',
        'application/json',
        'text/markdown',
        'application/json, text/html;q=0.5',
      ]) {
        const res = await get(url, accept);
        expect(res.statusCode, `${url} ${accept}`).toBe(404);
        expect(res.headers['content-type'], `${url} ${accept}`).toBe('application/json; charset=utf-8');
        expect(res.json(), `${url} ${accept}`).toEqual({
          code: 'not_found',
          message,
          docs_url: `${t.config.baseUrl}/docs/errors#not_found`,
        });
      }
    }
  });

  it('never changes the API or the well-known documents, whoever asks', async () => {
    for (const url of [
      '/api/no-such-route',
      '/api/label/nobody-here/no-such-tool',
      '/api/r/nobody-here/no-such-tool',
      '/.well-known/no-such-document',
    ]) {
      const res = await get(url, BROWSER);
      expect(res.statusCode, url).toBe(404);
      expect(res.headers['content-type'], url).toBe('application/json; charset=utf-8');
      expect(res.json().code, url).toBe('not_found');
    }
  });
});

describe('a paused service, to a browser', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { PAUSED: 'true' } });
  });
  afterAll(async () => t?.close());

  it('shows a page saying to come back shortly, keeping the 503 and its retry-after; programs keep the body', async () => {
    const page = await t.app.inject({ url: '/docs/selling', headers: { accept: BROWSER } });
    expect(page.statusCode).toBe(503);
    expect(page.headers['retry-after']).toBe('30');
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.body).toContain('Try again in a few minutes');
    const program = await t.app.inject({ url: '/docs/selling' });
    expect(program.statusCode).toBe(503);
    expect(program.json().code).toBe('paused');
  });
});
