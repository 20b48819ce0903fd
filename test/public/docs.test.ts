import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES, ERRORS } from '../../src/platform/errors.js';
import { createTestApp, type TestApp } from '../support/app.js';

describe('GET /docs/errors', () => {
  let t: TestApp;
  let html: string;
  beforeAll(async () => {
    t = await createTestApp();
    const res = await t.app.inject({ method: 'GET', url: '/docs/errors' });
    expect(res.statusCode).toBe(200);
    html = res.body;
  });
  afterAll(async () => t.close());

  it('has one section per code, anchored #<code>, with status, meaning and action', () => {
    for (const code of ERROR_CODES) {
      const start = html.indexOf(`<section class="error-code" id="${code}">`);
      expect(start, code).toBeGreaterThan(-1);
      const section = html.slice(start, html.indexOf('</section>', start));
      expect(section).toContain(`>${ERRORS[code].status}<`);
      expect(section).toContain(ERRORS[code].meaning.split(/[`'"]/)[0]!.slice(0, 12));
    }
    expect(html.match(/<section class="error-code"/g)).toHaveLength(34);
  });

  it('is the page docs_url points at', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/unknown' });
    const url = new URL(res.json().docs_url);
    expect(url.pathname).toBe('/docs/errors');
    expect(html).toContain(`id="${url.hash.slice(1)}"`);
  });

  it('serves every docs page and the home and manifest pages with a no-script CSP, never framed, nosniff', async () => {
    for (const url of ['/docs', '/docs/errors', '/docs/selling', '/docs/buying', '/docs/terms', '/']) {
      const res = await t.app.inject({ url });
      expect(res.statusCode, url).toBe(200);
      const csp = String(res.headers['content-security-policy']);
      expect(csp, url).toContain("default-src 'none'");
      expect(csp, url).toContain("frame-ancestors 'none'");
      expect(csp, url).not.toContain('script-src');
      expect(res.headers['x-content-type-options'], url).toBe('nosniff');
    }
  });

  it('lists the docs pages from /docs', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/docs' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('href="/docs/errors"');
    expect(res.body).toContain('href="/docs/terms"');
  });
});

describe('the buying and selling guides', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  it('are linked from /docs and show commands with the real base URL', async () => {
    const index = await t.app.inject({ method: 'GET', url: '/docs' });
    expect(index.body).toContain('href="/docs/buying"');
    expect(index.body).toContain('href="/docs/selling"');
    const buying = await t.app.inject({ method: 'GET', url: '/docs/buying' });
    expect(buying.statusCode).toBe(200);
    expect(buying.headers.link).toContain('api-catalog');
    expect(buying.body).toContain(`${t.config.baseUrl}/api/r/&lt;owner&gt;/&lt;slug&gt;`);
    for (const word of [
      'PAYMENT-SIGNATURE',
      'X-Quote-Id',
      'settlement_pending',
      'fetch_release',
      'SKILL.md',
    ]) {
      expect(buying.body).toContain(word);
    }
    const selling = await t.app.inject({ method: 'GET', url: '/docs/selling' });
    expect(selling.statusCode).toBe(200);
    for (const word of ['address_proof', 'ssh_public_key', 'GIT_SSH_COMMAND', '/publish', 'Rail A']) {
      expect(selling.body).toContain(word);
    }
  });

  it('lead the seller to the web app first, and keep the API as the second path, for programs', async () => {
    const guide = (await t.app.inject({ url: '/docs/selling.md' })).body;
    const headings = [...guide.matchAll(/^## (.+)$/gm)].map((m) => m[1]!);
    expect(headings[0]).toMatch(/web app/i);
    const api = headings.findIndex((heading) => /\bAPI\b/.test(heading));
    expect(api).toBeGreaterThan(0);
    // Signing in with a wallet, listing, pushing, pricing and publishing, all before the first curl.
    const app = guide.slice(0, guide.indexOf('curl'));
    expect(app).toContain(`(${t.config.baseUrl}/app)`);
    for (const step of [/sign in/i, /wallet/i, /listing/i, /push/i, /price/i, /publish/i])
      expect(app).toMatch(step);
    expect(guide.indexOf(`\n## ${headings[api]}`)).toBeLessThan(guide.indexOf('curl -X POST'));
  });
});
