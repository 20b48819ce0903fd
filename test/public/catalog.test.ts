import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
      expect(entry['service-doc'][0].href).toBe(`${TEST_BASE_URL}/docs`);
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

  it('points to the catalog from the home page', async () => {
    for (const method of ['GET', 'HEAD'] as const) {
      const res = await t.app.inject({ method, url: '/' });
      expect(res.statusCode).toBe(200);
      expect(res.headers.link).toBe(LINK);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    }
  });

  it('serves the stylesheet the pages link to', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/static/site.css' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/css');
  });
});
