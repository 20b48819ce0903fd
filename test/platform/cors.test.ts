import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';

describe('CORS', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  it('lets any origin preflight the buyer routes with the x402 and wallet headers', async () => {
    const res = await t.app.inject({
      method: 'OPTIONS',
      url: '/api/r/alice/tool',
      headers: {
        origin: 'https://agent.example',
        'access-control-request-method': 'GET',
        'access-control-request-headers':
          'payment-signature,x-quote-id,x-wallet-signature,access-control-expose-headers',
      },
    });
    expect(res.statusCode).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    const allowed = String(res.headers['access-control-allow-headers']).toLowerCase();
    for (const header of [
      'payment-signature',
      'x-quote-id',
      'x-wallet-signature',
      'access-control-expose-headers',
    ]) {
      expect(allowed).toContain(header);
    }
  });

  it('answers a plain OPTIONS (no Origin) on a public route as a preflight, not with a foreign body', async () => {
    for (const url of ['/api/r/alice/tool', '/api/entitlements', '/api/download/token']) {
      const res = await t.app.inject({ method: 'OPTIONS', url });
      expect(res.statusCode, url).toBe(204);
      expect(res.body, url).toBe('');
      expect(res.headers['access-control-allow-origin'], url).toBe('*');
    }
  });

  it('exposes PAYMENT-REQUIRED, PAYMENT-RESPONSE and x-request-id on buyer responses', async () => {
    const res = await t.app.inject({ url: '/api/terms', headers: { origin: 'https://agent.example' } });
    expect(res.headers['access-control-allow-origin']).toBe('*');
    const exposed = String(res.headers['access-control-expose-headers']).toLowerCase();
    for (const header of ['payment-required', 'payment-response', 'x-request-id'])
      expect(exposed).toContain(header);
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it('gives creator routes no CORS, so a foreign page cannot use a bearer key', async () => {
    const res = await t.app.inject({
      method: 'OPTIONS',
      url: '/api/listings',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    const get = await t.app.inject({ url: '/api/creators/me', headers: { origin: 'https://evil.example' } });
    expect(get.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('answers the preflight of every public prefix and refuses it on pages and creator routes', async () => {
    const preflight = (url: string) =>
      t.app.inject({
        method: 'OPTIONS',
        url,
        headers: { origin: 'https://agent.example', 'access-control-request-method': 'POST' },
      });
    for (const url of [
      '/.well-known/x402',
      '/api/mcp',
      '/api/health',
      '/api/entitlements',
      '/api/v/a/b/releases',
    ]) {
      const res = await preflight(url);
      expect(res.statusCode, url).toBe(204);
      expect(res.headers['access-control-allow-origin'], url).toBe('*');
    }
    for (const url of [
      '/api/creators/me',
      '/api/keys/rotate',
      '/alice/tool',
      '/app',
      '/api/listings/x/releases',
    ]) {
      const res = await preflight(url);
      expect(res.statusCode, url).toBe(404);
      expect(res.headers['access-control-allow-origin'], url).toBeUndefined();
      expect(res.json().code, url).toBe('not_found');
    }
  });

  it('sends no CORS headers on a page, whatever the origin', async () => {
    const res = await t.app.inject({ url: '/', headers: { origin: 'https://evil.example' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });
});
