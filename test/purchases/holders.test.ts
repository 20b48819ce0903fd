import { eq } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listings } from '../../src/db/schema/index.js';
import { BACKENDS } from '../support/db.js';
import {
  addRelease,
  buy,
  buyUrl,
  createPaymentsApp,
  fundedWallet,
  type ListingFixture,
  type PaymentsTestApp,
  publishListing,
  quote,
  signPayment,
  walletSignatureHeader,
} from './support.js';

describe.each(BACKENDS)('holders on %s', (backend) => {
  let t: PaymentsTestApp;
  beforeEach(async () => {
    t = await createPaymentsApp({ backend });
  });
  afterEach(async () => {
    await t.close();
  });

  const signed = async (wallet: Awaited<ReturnType<typeof fundedWallet>>) => ({
    'x-wallet-signature': await walletSignatureHeader(t, wallet),
  });
  const download = (url: string) => t.app.inject({ url: url.replace('http://repo402.test', '') });
  // Written straight to the table, then announced as the listings service does.
  const setListing = async (fixture: ListingFixture, values: Partial<typeof listings.$inferInsert>) => {
    await t.ctx.database.db.update(listings).set(values).where(eq(listings.id, fixture.listingId));
    t.ctx.listingEvents.announce(fixture.owner, fixture.slug);
  };

  it('a holder of an earlier version pays the update price, quoted with from, to and the releases between', async () => {
    const fixture = await publishListing(t, { priceMicro: 2_000_000n, updatePriceMicro: 500_000n });
    const wallet = await fundedWallet(t, 10_000_000n);
    expect((await buy(t, fixture, wallet)).statusCode).toBe(200);
    await addRelease(t, fixture, '1.1.0');
    await addRelease(t, fixture, '1.2.0');
    const update = await quote(t, fixture, await signed(wallet));
    expect(update.extra).toMatchObject({ kind: 'update', version: '1.2.0', from: '1.0.0', to: '1.2.0' });
    expect(update.extra.releases.map((r: { version: string }) => r.version)).toEqual(['1.1.0', '1.2.0']);
    expect(update.accepts[0].amount).toBe('500000');
    const res = await t.app.inject({
      url: buyUrl(fixture),
      headers: {
        'payment-signature': await signPayment(update, wallet),
        'x-quote-id': update.extra.quote_id,
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ kind: 'update', version: '1.2.0' });
    expect(await t.rail.devnet!.balanceOf(wallet.address)).toBe(10_000_000n - 2_500_000n);
    // The owner of the version on sale gets it at once, without paying.
    const again = await t.app.inject({ url: buyUrl(fixture), headers: await signed(wallet) });
    expect(again.statusCode).toBe(200);
    expect(again.json().kind).toBe('owned');
  });

  it("a purchase made while updates are free is stamped all_versions: later versions are the holder's", async () => {
    const fixture = await publishListing(t, { priceMicro: 1_000_000n, updatePriceMicro: 0n });
    const wallet = await fundedWallet(t, 5_000_000n);
    expect((await buy(t, fixture, wallet)).statusCode).toBe(200);
    await setListing(fixture, { updatePriceMicro: 700_000n });
    await addRelease(t, fixture, '2.0.0');
    const res = await t.app.inject({ url: buyUrl(fixture), headers: await signed(wallet) });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ kind: 'owned', version: '2.0.0' });
    const refetch = await t.app.inject({ url: `${buyUrl(fixture)}/v/2.0.0`, headers: await signed(wallet) });
    expect(refetch.statusCode).toBe(200);
    // Someone who bought after the update price was set gets no such stamp.
    const later = await fundedWallet(t, 5_000_000n);
    expect((await buy(t, fixture, later)).statusCode).toBe(200);
    await addRelease(t, fixture, '2.1.0');
    expect((await quote(t, fixture, await signed(later))).extra.kind).toBe('update');
    expect(await t.rail.devnet!.balanceOf(wallet.address)).toBe(4_000_000n);
  });

  it('a free listing answers 200 at once, records a signing wallet as holder, and needs no quote', async () => {
    const fixture = await publishListing(t, { priceMicro: 0n, updatePriceMicro: 0n });
    const anonymous = await t.app.inject({ url: buyUrl(fixture) });
    expect(anonymous.statusCode).toBe(200);
    expect(anonymous.json().kind).toBe('free');
    expect(
      (await download(anonymous.json().download_url)).rawPayload.equals(fixture.zips.get('1.0.0')!.bytes),
    ).toBe(true);
    const wallet = await fundedWallet(t, 0n);
    const withWallet = await t.app.inject({ url: buyUrl(fixture), headers: await signed(wallet) });
    expect(withWallet.json()).toMatchObject({ kind: 'free', purchase_id: expect.any(String) });
    const entitlements = await t.app.inject({ url: '/api/entitlements', headers: await signed(wallet) });
    // A free claim holds the version claimed, never the versions after it (nobody paid for those).
    expect(entitlements.json().items).toMatchObject([{ version: '1.0.0', all_versions: false }]);
  });

  it('holders re-fetch owned versions after the listing is retired; buyers get 410', async () => {
    const fixture = await publishListing(t, { versions: ['1.0.0', '1.1.0'] });
    const wallet = await fundedWallet(t, 5_000_000n);
    expect((await buy(t, fixture, wallet)).json().version).toBe('1.1.0');
    await setListing(fixture, { status: 'retired' });
    const refetch = await t.app.inject({ url: `${buyUrl(fixture)}/v/1.1.0`, headers: await signed(wallet) });
    expect(refetch.statusCode).toBe(200);
    const zip = await download(refetch.json().download_url);
    expect(zip.statusCode).toBe(200);
    expect(zip.rawPayload.equals(fixture.zips.get('1.1.0')!.bytes)).toBe(true);
    expect((await t.app.inject({ url: buyUrl(fixture), headers: await signed(wallet) })).statusCode).toBe(
      200,
    );
    const other = await fundedWallet(t, 5_000_000n);
    const refused = await t.app.inject({ url: buyUrl(fixture), headers: await signed(other) });
    expect(refused.statusCode).toBe(410);
    expect(refused.json().code).toBe('retired');
    const notOwned = await t.app.inject({ url: `${buyUrl(fixture)}/v/1.0.0`, headers: await signed(wallet) });
    expect(notOwned.json().code).toBe('not_entitled');
  });

  it.each([
    ['a version that is not X.Y.Z', (f: ListingFixture) => `/api/r/${f.owner}/${f.slug}/v/latest`],
    ['a version with a NUL byte', (f: ListingFixture) => `/api/r/${f.owner}/${f.slug}/v/1.0.0%00`],
    ['an unreleased version', (f: ListingFixture) => `/api/r/${f.owner}/${f.slug}/v/9.9.9`],
    ['an owner that cannot exist', (f: ListingFixture) => `/api/r/BAD_OWNER/${f.slug}/v/1.0.0`],
    ['a slug with a NUL byte', (f: ListingFixture) => `/api/r/${f.owner}/x%00/v/1.0.0`],
    ['a buy of a slug that cannot exist', (f: ListingFixture) => `/api/r/${f.owner}/no_such_slug`],
    ['the version status of an owner that cannot exist', (f: ListingFixture) => `/api/v/BAD_OWNER/${f.slug}`],
  ])('re-fetch, buy and status answer 404 not_found for %s, as every public route does', async (_, url) => {
    const fixture = await publishListing(t);
    const wallet = await fundedWallet(t, 0n);
    const res = await t.app.inject({ url: url(fixture), headers: await signed(wallet) });
    expect(res.statusCode, res.body).toBe(404);
    expect(res.json().code).toBe('not_found');
  });

  it("entitlements need a wallet signature and page with next_cursor; nobody sees another wallet's", async () => {
    const creator = (await publishListing(t, { slug: 'kit-0', priceMicro: 0n })).creator;
    const fixtures = [await publishListing(t, { slug: 'kit-1', priceMicro: 0n, creator })];
    for (let i = 2; i <= 5; i += 1)
      fixtures.push(await publishListing(t, { slug: `kit-${i}`, priceMicro: 0n, creator }));
    const wallet = await fundedWallet(t, 0n);
    for (const fixture of fixtures) {
      t.clock.advance(1000);
      await t.app.inject({ url: buyUrl(fixture), headers: await signed(wallet) });
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor ? `?limit=2&cursor=${cursor}` : '?limit=2';
      const page = await t.app.inject({ url: `/api/entitlements${query}`, headers: await signed(wallet) });
      expect(page.statusCode, page.body).toBe(200);
      expect(page.json().items.length).toBeLessThanOrEqual(2);
      seen.push(...page.json().items.map((item: { slug: string }) => item.slug));
      cursor = page.json().next_cursor;
    } while (cursor);
    expect(seen).toEqual(['kit-5', 'kit-4', 'kit-3', 'kit-2', 'kit-1']);
    expect((await t.app.inject({ url: '/api/entitlements' })).json().code).toBe('invalid_signature');
    const stranger = await fundedWallet(t, 0n);
    expect(
      (await t.app.inject({ url: '/api/entitlements', headers: await signed(stranger) })).json().items,
    ).toEqual([]);
    const bad = await t.app.inject({ url: '/api/entitlements?cursor=zzz', headers: await signed(wallet) });
    expect(bad.json().code).toBe('invalid_request');
  });

  it('version status shows owned, entitled and price_kind only with a valid wallet signature', async () => {
    const fixture = await publishListing(t, { scanCounts: { blocking: 0, disclosed: 2, review: 1 } });
    const wallet = await fundedWallet(t, 5_000_000n);
    const url = `/api/v/${fixture.owner}/${fixture.slug}`;
    const anonymous = await t.app.inject({ url: `${url}?address=${wallet.address}` });
    expect(anonymous.statusCode).toBe(200);
    expect(anonymous.json()).toMatchObject({
      version: '1.0.0',
      price_micro: '2000000',
      scan: { disclosed: 2 },
    });
    expect(anonymous.json()).not.toHaveProperty('owned');
    expect(anonymous.json()).not.toHaveProperty('price_kind');
    const before = await t.app.inject({ url, headers: await signed(wallet) });
    expect(before.json()).toMatchObject({ owned: false, entitled: false, price_kind: 'new' });
    expect((await buy(t, fixture, wallet)).statusCode).toBe(200);
    const after = await t.app.inject({ url, headers: await signed(wallet) });
    expect(after.json()).toMatchObject({ owned: true, entitled: true, price_kind: 'owned' });
    await addRelease(t, fixture, '1.1.0');
    const newer = await t.app.inject({ url, headers: await signed(wallet) });
    expect(newer.json()).toMatchObject({ version: '1.1.0', owned: false, price_kind: 'update' });
    // The newer release's own scan: a README-only tree with nothing to disclose.
    expect(newer.json().scan).toEqual({ blocking: 0, disclosed: 0, review: 0 });
    const forged = await t.app.inject({ url, headers: { 'x-wallet-signature': 'e30=' } });
    expect(forged.statusCode).toBe(401);
    // A wallet signature is single use.
    const header = await walletSignatureHeader(t, wallet);
    expect((await t.app.inject({ url, headers: { 'x-wallet-signature': header } })).statusCode).toBe(200);
    expect((await t.app.inject({ url, headers: { 'x-wallet-signature': header } })).statusCode).toBe(401);
  });

  it('download URLs expire after 5 minutes and refuse tampering', async () => {
    const fixture = await publishListing(t, { priceMicro: 0n });
    const grant = (await t.app.inject({ url: buyUrl(fixture) })).json();
    expect(Date.parse(grant.expires_at) - t.clock.now().getTime()).toBe(300_000);
    const token = grant.download_url.split('/').at(-1) as string;
    const [kind, body, mac] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ l: fixture.listingId, v: '9.9.9', e: 9e9 })).toString(
      'base64url',
    );
    // Not even shaped like a token (a space, a quote, a percent-encoded NUL): unknown, like the rest.
    for (const bad of [
      `${kind}.${forged}.${mac}`,
      `${kind}.${body}.${'A'.repeat(43)}`,
      'nonsense',
      'a%20b',
      '%22x%22',
      '%00',
    ]) {
      const res = await t.app.inject({ url: `/api/download/${bad}` });
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe('not_found');
    }
    t.clock.advance(300_001);
    // An expired URL says so and names the re-fetch that replaces it; it is not "you do not own this".
    const expired = await download(grant.download_url);
    expect(expired.json().code).toBe('expired_authorization');
    expect(expired.statusCode).toBe(402);
    expect(expired.headers['payment-required']).toBeUndefined();
    expect(expired.json().message).toContain('expired');
    expect(expired.json().message).toContain(`${buyUrl(fixture)}/v/1.0.0`);
    expect(expired.json().message).toContain('fetch_release');
  });
});
