import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { publishedListingFixture } from '../support/listings.js';

/**
 * Issue 38: the pages the buyer's script runs on. They load that one file of this origin and
 * nothing inline, may talk only to this origin, and say what they are without it.
 */
describe('the pages the buyer’s script runs on', () => {
  let t: TestApp;
  let buyScript: string;
  beforeAll(async () => {
    t = await createTestApp();
    buyScript = `/app/assets/${JSON.parse(await readFile('dist/web/manifest.json', 'utf8')).buy_script}`;
  });
  afterAll(() => t?.close());

  function expectOnlyTheBuyScript(res: { headers: Record<string, unknown>; body: string }) {
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe');
    const scripts = [...res.body.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.map((match) => [match[1], match[2]])).toEqual([[` type="module" src="${buyScript}"`, '']]);
  }

  it('the manifest page mounts the checkout with what it needs, and keeps its buy steps for programs', async () => {
    const f = await publishedListingFixture(t, { priceMicro: 2_000_000n, releases: [{ version: '1.0.0' }] });
    const res = await t.app.inject({ url: `/${f.owner}/${f.slug}` });
    expect(res.statusCode).toBe(200);
    expectOnlyTheBuyScript(res);
    expect(res.body).toContain(
      `<div id="checkout" data-owner="${f.owner}" data-slug="${f.slug}" data-version="1.0.0" data-devnet="true" data-chain-id="8453" data-chain-name="Base" data-chain-rpc="https://mainnet.base.org" data-chain-explorer="https://basescan.org"></div>`,
    );
    expect(res.body).toContain('<a href="/library">Your library</a>');
    expect(res.body).toContain('From a program or an agent');
    // The script it names is served, as JavaScript.
    const script = await t.app.inject({ url: buyScript });
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-type']).toContain('text/javascript');
  });

  it('a retired listing says so to the script', async () => {
    const f = await publishedListingFixture(t, { status: 'retired', releases: [{ version: '1.0.0' }] });
    const res = await t.app.inject({ url: `/${f.owner}/${f.slug}` });
    expect(res.body).toMatch(/<div id="checkout"[^>]* data-retired="true"[^>]*><\/div>/);
  });

  it('/library is a page that says what it is without script, under the same policy', async () => {
    const res = await t.app.inject({ url: '/library' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/html');
    expectOnlyTheBuyScript(res);
    expect(res.body).toContain('<h1>Your library</h1>');
    expect(res.body).toContain(
      '<div id="library" data-devnet="true" data-chain-id="8453" data-chain-name="Base" data-chain-rpc="https://mainnet.base.org" data-chain-explorer="https://basescan.org"><noscript>',
    );
    expect(res.body).toContain('The library needs JavaScript and a browser wallet');
  });
});
