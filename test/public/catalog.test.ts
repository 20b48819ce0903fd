import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VERSIONS_SOLD } from '../../src/platform/errors.js';
import { SITE_LINKS } from '../../src/platform/http/discovery-links.js';
import { createTestApp, TEST_BASE_URL, type TestApp } from '../support/app.js';

const LINK = '</.well-known/api-catalog>; rel="api-catalog"';

describe('discovery: API catalog and home page', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  it('serves an RFC 9727 linkset anchored on the API and on the MCP server', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/.well-known/api-catalog' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(
      /^application\/linkset\+json; profile="https:\/\/www\.rfc-editor\.org\/info\/rfc9727"/,
    );
    expect(res.headers.link).toBe(LINK);
    const { linkset } = res.json();
    expect(linkset.map((entry: { anchor: string }) => entry.anchor)).toEqual([
      `${TEST_BASE_URL}/api`,
      `${TEST_BASE_URL}/api/mcp`,
    ]);
    for (const entry of linkset) {
      expect(entry['service-desc']).toEqual([
        { href: `${TEST_BASE_URL}/api/openapi.json`, type: 'application/openapi+json' },
      ]);
      // The buying skill and guide as markdown, for agents, then the docs for people.
      expect(entry['service-doc']).toEqual([
        { href: `${TEST_BASE_URL}/.well-known/agent-skills/buy-a-repo/SKILL.md`, type: 'text/markdown' },
        { href: `${TEST_BASE_URL}/docs/buying.md`, type: 'text/markdown' },
        { href: `${TEST_BASE_URL}/docs`, type: 'text/html' },
      ]);
      expect(entry.describedby).toEqual([
        { href: `${TEST_BASE_URL}/.well-known/x402`, type: 'application/json' },
      ]);
      expect(entry.status).toEqual([{ href: `${TEST_BASE_URL}/api/health`, type: 'application/json' }]);
      expect(entry['terms-of-service'][0].href).toBe(`${TEST_BASE_URL}/api/terms`);
      expect(entry['service-meta']).toContainEqual({
        href: `${TEST_BASE_URL}/.well-known/repo402-keys.json`,
        type: 'application/json',
      });
    }
  });

  it('answers HEAD with the headers and no body', async () => {
    const res = await t.app.inject({ method: 'HEAD', url: '/.well-known/api-catalog' });
    expect(res.statusCode).toBe(200);
    expect(res.headers.link).toBe(LINK);
    expect(res.headers['content-type']).toContain('application/linkset+json');
    expect(res.body).toBe('');
  });

  it('points every page to the catalog, the buying skill and the x402 resources', async () => {
    for (const url of [
      '/',
      '/docs',
      '/docs/buying',
      '/docs/selling',
      '/docs/errors',
      '/app',
      '/app/listings',
    ]) {
      for (const method of ['GET', 'HEAD'] as const) {
        const res = await t.app.inject({ method, url });
        expect(res.statusCode, url).toBe(200);
        expect(res.headers.link, url).toBe(SITE_LINKS);
        expect(res.headers['content-type'], url).toBe('text/html; charset=utf-8');
      }
    }
    // Each a link a client can follow: RFC 8288 targets with the relation the catalog uses.
    const targets = [...SITE_LINKS.matchAll(/<([^>]+)>; rel="([^"]+)"/g)].map(([, href, rel]) => ({
      href,
      rel,
    }));
    expect(targets).toEqual([
      { href: '/.well-known/api-catalog', rel: 'api-catalog' },
      { href: '/.well-known/agent-skills/buy-a-repo/SKILL.md', rel: 'service-doc' },
      { href: '/.well-known/x402', rel: 'describedby' },
    ]);
    for (const { href } of targets) expect((await t.app.inject({ url: href! })).statusCode, href).toBe(200);
  });

  it('answers an agent that asks the home page for markdown with the service, what is on sale and how to buy', async () => {
    const res = await t.app.inject({ url: '/', headers: { accept: 'text/markdown, text/html;q=0.5' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/markdown; charset=utf-8');
    expect(res.headers.vary).toBe('Accept');
    expect(res.headers.link).toBe(SITE_LINKS);
    expect(res.body).toMatch(/^# repo402 at /);
    expect(res.body).toContain('## On sale here');
    // The buying skill follows, without its front matter.
    expect(res.body).toContain('# Buy a repository on repo402');
    expect(res.body).not.toContain('name: buy-a-repo');
    const browser = await t.app.inject({ url: '/', headers: { accept: 'text/html,*/*;q=0.8' } });
    expect(browser.headers['content-type']).toBe('text/html; charset=utf-8');
  });

  it('serves the guides and the error reference as markdown at .md and to Accept: text/markdown', async () => {
    for (const path of ['/docs/buying', '/docs/selling', '/docs/errors', '/docs/attestations/release/v1']) {
      const asked = await t.app.inject({ url: path, headers: { accept: 'text/markdown' } });
      const suffixed = await t.app.inject({ url: `${path}.md` });
      for (const res of [asked, suffixed]) {
        expect(res.statusCode, path).toBe(200);
        expect(res.headers['content-type'], path).toBe('text/markdown; charset=utf-8');
        expect(res.body, path).toMatch(/^# /);
        expect(res.body, path).not.toContain('<html');
      }
      expect(asked.body).toBe(suffixed.body);
      expect(asked.headers.vary).toBe('Accept');
      // A browser's Accept still gets the page, and markdown is far smaller.
      const browser = await t.app.inject({
        url: path,
        headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' },
      });
      expect(browser.headers['content-type'], path).toBe('text/html; charset=utf-8');
      expect(asked.body.length, path).toBeLessThan(browser.body.length);
    }
    const errors = (await t.app.inject({ url: '/docs/errors.md' })).body;
    expect(errors).toContain('| `not_entitled` | 403 |');
    expect(errors).toContain(VERSIONS_SOLD);
    expect((await t.app.inject({ url: '/docs.md' })).statusCode).toBe(404);
  });

  it('serves the stylesheet the pages link to', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/static/site.css' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/css');
  });
});
