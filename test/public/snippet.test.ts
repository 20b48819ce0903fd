import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { publishedListingFixture } from '../support/listings.js';

describe('GET /api/snippet/{owner}/{slug}', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(() => t.close());

  it('tells the agent to check /api/v before each run; updates included wording', async () => {
    const f = await publishedListingFixture(t, { updatePriceMicro: 0n, releases: [{ version: '1.4.2' }] });
    const res = await t.app.inject({ method: 'GET', url: `/api/snippet/${f.owner}/${f.slug}` });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/markdown; charset=utf-8');
    expect(res.body).toContain(`GET ${t.config.baseUrl}/api/v/${f.owner}/${f.slug}`);
    expect(res.body).toContain('Before each run');
    expect(res.body).toContain('1.4.2');
    expect(res.body).toContain('Updates are included');
    expect(res.body).not.toContain('Updates are paid');
  });

  it('uses the paid-updates wording with the exact update price', async () => {
    const f = await publishedListingFixture(t, { updatePriceMicro: 2_500_000n });
    const res = await t.app.inject({ method: 'GET', url: `/api/snippet/${f.owner}/${f.slug}` });
    expect(res.body).toContain('Updates are paid');
    expect(res.body).toContain('2.50 USD');
    expect(res.body).toContain('2500000');
    expect(res.body).not.toContain('Updates are included');
    // One price to move from any held version to the newest (issue 17 item 5).
    expect(res.body).not.toContain('each newer version costs');
    expect(res.body).toContain('costs one update price');
    expect(res.body).toContain('however many versions you skip');
  });

  it('is 404 for drafts and unknown listings', async () => {
    const draft = await publishedListingFixture(t, { status: 'draft' });
    for (const url of [`/api/snippet/${draft.owner}/${draft.slug}`, '/api/snippet/no/body']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe('not_found');
    }
  });
});
