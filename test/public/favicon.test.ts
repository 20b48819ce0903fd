import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { publishedListingFixture } from '../support/listings.js';

describe('the site icon', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t?.close());

  it('answers /favicon.ico with the site icon, by its type (browsers go by it, not the name), kept for a week', async () => {
    const res = await t.app.inject({ url: '/favicon.ico' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('image/svg+xml');
    expect(res.headers['cache-control']).toBe('public, max-age=604800');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.body).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    expect((await t.app.inject({ method: 'HEAD', url: '/favicon.ico' })).statusCode).toBe(200);
  });

  it('is linked as an SVG, named by its content and kept for a year, from every page', async () => {
    const f = await publishedListingFixture(t);
    const links = new Set<string>();
    for (const url of ['/', '/docs', '/docs/selling', `/${f.owner}/${f.slug}`, '/?q=nothing', '/app']) {
      const res = await t.app.inject({ url });
      expect(res.statusCode, url).toBe(200);
      const link = /<link rel="icon" href="([^"]+)" type="image\/svg\+xml"/.exec(res.body);
      expect(link, url).not.toBeNull();
      links.add(link![1]!);
    }
    // And from an error page a browser is shown.
    const missing = await t.app.inject({ url: '/no-such-page', headers: { accept: 'text/html' } });
    links.add(/<link rel="icon" href="([^"]+)"/.exec(missing.body)![1]!);
    expect(links.size).toBe(1);
    const [href] = [...links];
    expect(href).toMatch(/^\/static\/icon-[0-9a-f]{12}\.svg$/);

    const svg = await t.app.inject({ url: href! });
    expect(svg.statusCode).toBe(200);
    expect(svg.headers['content-type']).toBe('image/svg+xml');
    expect(svg.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(svg.body).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    // Nothing in it runs or loads: shapes only.
    expect(svg.body).not.toMatch(/<script|href=|on[a-z]+=/i);
    expect((await t.app.inject({ url: '/favicon.ico' })).body).toBe(svg.body);
  });
});
