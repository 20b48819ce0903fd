import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TERMS_VERSION } from '../../src/identity/terms.js';
import { createTestApp, TEST_BASE_URL, type TestApp } from '../support/app.js';

describe('GET /api/terms', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  it('serves the creator agreement at top level and buyer_terms with the same fields', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/terms' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toEqual({
      version: TERMS_VERSION,
      url: `${TEST_BASE_URL}/docs/terms#creator-agreement`,
      text: expect.stringContaining('creator agreement'),
      buyer_terms: {
        version: TERMS_VERSION,
        url: `${TEST_BASE_URL}/docs/terms#buyer-terms`,
        text: expect.stringContaining('buyer terms'),
      },
    });
  });

  it('carries a strong ETag and answers 304 to If-None-Match', async () => {
    const first = await t.app.inject({ method: 'GET', url: '/api/terms' });
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const again = await t.app.inject({
        method: 'GET',
        url: '/api/terms',
        headers: { 'if-none-match': ifNoneMatch },
      });
      expect(again.statusCode, ifNoneMatch).toBe(304);
      expect(again.body).toBe('');
    }
    const changed = await t.app.inject({
      method: 'GET',
      url: '/api/terms',
      headers: { 'if-none-match': '"other"' },
    });
    expect(changed.statusCode).toBe(200);
  });

  it('has a human page with both anchors', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/docs/terms' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('id="creator-agreement"');
    expect(res.body).toContain('id="buyer-terms"');
    expect(res.body).toContain(TERMS_VERSION);
  });

  it('refuses other methods with the error body', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/terms', payload: {} });
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('not_found');
  });
});
