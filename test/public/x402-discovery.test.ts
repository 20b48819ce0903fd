import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPaymentsApp, type PaymentsTestApp } from '../purchases/support.js';
import { patchListingFixture, publishedListingFixture } from '../support/listings.js';

describe('GET /.well-known/x402', () => {
  let t: PaymentsTestApp;
  beforeAll(async () => {
    t = await createPaymentsApp();
  });
  afterAll(() => t.close());

  it('lists every resource on sale, in the x402scan and Bazaar shapes, matching the 402', async () => {
    const onSale = await publishedListingFixture(t, {
      priceMicro: 4_000_000n,
      releases: [{ version: '1.0.0' }, { version: '1.1.0' }],
    });
    const retired = await publishedListingFixture(t, { status: 'retired' });
    const draft = await publishedListingFixture(t, { status: 'draft' });

    const res = await t.app.inject({ url: '/.well-known/x402' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    const doc = res.json();
    expect(doc.x402Version).toBe(2);
    expect(doc.version).toBe(1);
    expect(doc.instructions).toContain('PAYMENT-SIGNATURE');
    const url = `${t.config.baseUrl}/api/r/${onSale.owner}/${onSale.slug}`;
    expect(doc.resources).toContain(`GET ${url}`);
    expect(doc.resources.join()).not.toContain(retired.slug);
    expect(doc.resources.join()).not.toContain(draft.slug);

    const item = doc.items.find((entry: { resource: string }) => entry.resource === url);
    expect(item).toMatchObject({
      type: 'http',
      x402Version: 2,
      mimeType: 'application/zip',
      description: 'A fixture listing',
      metadata: { version: '1.1.0' },
    });
    expect(new Date(item.lastUpdated).toISOString()).toBe(item.lastUpdated);
    // The same requirement the 402 asks to sign.
    const quote = await t.app.inject({ url: new URL(url).pathname });
    expect(quote.statusCode).toBe(402);
    expect(item.accepts[0]).toEqual(quote.json().accepts[0]);
  });

  it('follows a price change at once and supports If-None-Match', async () => {
    const f = await publishedListingFixture(t, { priceMicro: 1_000_000n });
    const first = await t.app.inject({ url: '/.well-known/x402' });
    const again = await t.app.inject({
      url: '/.well-known/x402',
      headers: { 'if-none-match': first.headers.etag as string },
    });
    expect(again.statusCode).toBe(304);
    await patchListingFixture(t, f.listingId, { priceMicro: 7_000_000n });
    const changed = await t.app.inject({ url: '/.well-known/x402' });
    const url = `${t.config.baseUrl}/api/r/${f.owner}/${f.slug}`;
    const item = changed.json().items.find((entry: { resource: string }) => entry.resource === url);
    expect(item.accepts[0].amount).toBe('7000000');
  });
});

describe('GET /.well-known/x402 in two apps of one process', () => {
  it('gives each app the document for its own base URL', async () => {
    const first = await createPaymentsApp({ env: { BASE_URL: 'http://first.test' } });
    const second = await createPaymentsApp({ env: { BASE_URL: 'http://second.test' } });
    try {
      for (const t of [first, second]) await publishedListingFixture(t, { priceMicro: 1_000_000n });
      for (const t of [first, second]) {
        const doc = (await t.app.inject({ url: '/.well-known/x402' })).json();
        expect(doc.resources.length).toBeGreaterThan(0);
        for (const resource of doc.resources) expect(resource).toContain(`GET ${t.config.baseUrl}/`);
        expect(doc.instructions).toContain(`Skill: ${t.config.baseUrl}/`);
      }
    } finally {
      await first.close();
      await second.close();
    }
  });
});
