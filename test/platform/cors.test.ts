import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rateLimitConfig } from '../../src/platform/limits/rate-limit.js';
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

  it('lets a foreign page read the error of a public path: no route, no listing, a HEAD', async () => {
    const origin = { origin: 'https://agent.example' };
    for (const url of [
      '/api/r/alice',
      '/api/v/nobody/nothing',
      '/api/snippet/nobody/nothing',
      '/api/health',
    ]) {
      for (const method of ['GET', 'HEAD'] as const) {
        const res = await t.app.inject({ method, url, headers: origin });
        expect(res.headers['access-control-allow-origin'], `${method} ${url}`).toBe('*');
        expect(String(res.headers['access-control-expose-headers']), `${method} ${url}`).toContain(
          'PAYMENT-REQUIRED',
        );
      }
    }
    expect((await t.app.inject({ url: '/api/r/alice', headers: origin })).statusCode).toBe(404);
  });

  it('sends the headers with an error raised before any route could add them', async () => {
    const origin = { origin: 'https://agent.example' };
    // No route, and a body that does not parse: the 400 is the parser's, before the not-found handler.
    const unparsable = await t.app.inject({
      method: 'POST',
      url: '/api/v/a',
      payload: '{',
      headers: { ...origin, 'content-type': 'application/json' },
    });
    expect(unparsable.statusCode).toBe(400);
    expect(unparsable.headers['access-control-allow-origin']).toBe('*');
    // A path segment longer than the router takes is answered before routing.
    const long = await t.app.inject({ url: `/api/v/${'a'.repeat(600)}/b`, headers: origin });
    expect(long.statusCode).toBe(404);
    expect(long.headers['access-control-allow-origin']).toBe('*');
    const creatorPath = await t.app.inject({
      method: 'POST',
      url: '/api/listings/x/y/z',
      payload: '{',
      headers: { origin: 'https://evil.example', 'content-type': 'application/json' },
    });
    expect(creatorPath.statusCode).toBe(400);
    expect(creatorPath.headers['access-control-allow-origin']).toBeUndefined();
  });

  it("lets a foreign page get a wallet challenge, the start of a buyer's X-Wallet-Signature", async () => {
    const preflight = await t.app.inject({
      method: 'OPTIONS',
      url: '/api/auth/challenge?address=0x0000000000000000000000000000000000000001&purpose=wallet_ownership',
      headers: { origin: 'https://agent.example', 'access-control-request-method': 'GET' },
    });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('*');
    const challenge = await t.app.inject({
      url: '/api/auth/challenge?address=0x0000000000000000000000000000000000000001&purpose=wallet_ownership',
      headers: { origin: 'https://agent.example' },
    });
    expect(challenge.statusCode).toBe(200);
    expect(challenge.headers['access-control-allow-origin']).toBe('*');
    // Nor is a path that only starts with the same letters.
    const near = await t.app.inject({
      url: '/api/auth/challenges',
      headers: { origin: 'https://evil.example' },
    });
    expect(near.headers['access-control-allow-origin']).toBeUndefined();
    // Key rotation beside it is a creator's, with a bearer key: no CORS.
    const rotate = await t.app.inject({
      method: 'OPTIONS',
      url: '/api/auth/rotate-key',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(rotate.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('keeps CORS off the not-found answer of a path that is not public', async () => {
    for (const url of ['/api/creators/nothing/here', '/api/listings/x/y/z', '/no/such/page']) {
      const res = await t.app.inject({ url, headers: { origin: 'https://evil.example' } });
      expect(res.statusCode, url).toBe(404);
      expect(res.headers['access-control-allow-origin'], url).toBeUndefined();
    }
  });
});

describe('CORS on a refused public request', () => {
  it('sends the headers with a 429, so a browser client can read retry_after_seconds', async () => {
    const limited = await createTestApp({
      env: { RATE_LIMIT_PUBLIC: '1/60' },
      extend: (app, ctx) => {
        app.get(
          '/api/snippet/limited/route',
          { config: rateLimitConfig(ctx.config, 'public') },
          async () => ({
            ok: true,
          }),
        );
      },
    });
    try {
      const headers = { origin: 'https://agent.example' };
      expect((await limited.app.inject({ url: '/api/snippet/limited/route', headers })).statusCode).toBe(200);
      const res = await limited.app.inject({ url: '/api/snippet/limited/route', headers });
      expect(res.statusCode).toBe(429);
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(String(res.headers['access-control-expose-headers'])).toContain('retry-after');
    } finally {
      await limited.close();
    }
  });
});
