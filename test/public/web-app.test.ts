import { readFile } from 'node:fs/promises';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installErrorHandling } from '../../src/platform/http/error-handler.js';
import { APP_CSP, registerWebApp } from '../../src/public/web-app.js';
import { createTestApp, TEST_BASE_URL, type TestApp } from '../support/app.js';

/** The creator app's files: one shell for every /app path, hashed assets, a strict CSP. */
describe('the web app at /app', () => {
  let t: TestApp;
  let manifest: { script: string; stylesheet: string; files: string[] };

  beforeAll(async () => {
    t = await createTestApp();
    manifest = JSON.parse(await readFile('dist/web/manifest.json', 'utf8'));
  });
  afterAll(async () => t?.close());

  it.each([
    '/app',
    '/app/',
    '/app/listings',
    '/app/listings/3f1c2a4e-0000-4000-8000-000000000000',
    '/app/x/y/z',
  ])('answers %s with the shell under a strict CSP', async (url) => {
    const res = await t.app.inject({ url });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-security-policy']).toBe(APP_CSP);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.body).toContain(`<script type="module" src="/app/assets/${manifest.script}"></script>`);
    expect(res.body).toContain(`href="/app/assets/${manifest.stylesheet}"`);
    // No inline script anywhere: the CSP would refuse it, and nothing needs it.
    expect(res.body.match(/<script/g)).toHaveLength(1);
  });

  it('forbids inline scripts, other origins and framing', () => {
    expect(APP_CSP).toContain("script-src 'self'");
    expect(APP_CSP).not.toContain('unsafe-inline');
    expect(APP_CSP).not.toContain('unsafe-eval');
    expect(APP_CSP).toContain("connect-src 'self'");
    expect(APP_CSP).toContain("frame-ancestors 'none'");
  });

  it('serves the built assets, cacheable forever under their hashed names', async () => {
    const script = await t.app.inject({ url: `/app/assets/${manifest.script}` });
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(script.body).toBe(await readFile(`dist/web/${manifest.script}`, 'utf8'));
    const style = await t.app.inject({ url: `/app/assets/${manifest.stylesheet}` });
    expect(style.headers['content-type']).toBe('text/css; charset=utf-8');
  });

  it.each([
    '/app/assets/nope.js',
    '/app/assets/manifest.json',
    '/app/assets/..%2F..%2Fpackage.json',
    '/app/assets/%2e%2e%2fmanifest.json',
  ])('answers %s with the spec’s not_found and no file', async (url) => {
    const res = await t.app.inject({ url });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({
      code: 'not_found',
      docs_url: `${TEST_BASE_URL}/docs/errors#not_found`,
    });
  });

  it('keeps /app out of the OpenAPI document (it is a page, not an API)', async () => {
    const doc = (await t.app.inject({ url: '/api/openapi.json' })).json();
    expect(Object.keys(doc.paths).some((route) => route.startsWith('/app'))).toBe(false);
  });

  it('says how to build it when the bundle is missing', async () => {
    const app = Fastify();
    installErrorHandling(app as never, TEST_BASE_URL);
    registerWebApp(app as never, t.ctx, '/nonexistent/web/');
    const res = await app.inject({ url: '/app/listings' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({
      code: 'not_found',
      message: expect.stringContaining('npm run build'),
    });
    await app.close();
  });
});
