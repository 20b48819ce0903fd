import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, newWallet, startWalletSession } from '../identity/support.js';
import {
  buy,
  buyUrl,
  createPaymentsApp,
  type ListingFixture,
  type PaymentsTestApp,
  publishListing,
  quote,
  signPayment,
  walletSignatureHeader,
} from './support.js';

/**
 * docs/OPERATIONS.md, "Secrets and their rotation": after APP_SECRET changes, what it signed
 * (download URLs, quotes, wallet sessions) stops verifying, nothing is charged for a payment made
 * against an old quote, and holders and buyers go on with fresh ones.
 */
describe('rotating APP_SECRET', () => {
  let t: PaymentsTestApp;
  let fixture: ListingFixture;
  const holder = newWallet();
  const buyer = newWallet();

  beforeAll(async () => {
    t = await createPaymentsApp();
    fixture = await publishListing(t, { priceMicro: 1_000_000n });
    await t.rail.devnet!.fund(holder.address, 5_000_000n);
    await t.rail.devnet!.fund(buyer.address, 5_000_000n);
  });
  afterAll(async () => t?.close());

  it('retires what the old secret signed; fresh quotes, sessions and downloads work', async () => {
    const paid = await buy(t, fixture, holder);
    expect(paid.statusCode, paid.body).toBe(200);
    const oldDownload = paid.json().download_url as string;
    const oldQuote = await quote(t, fixture, { 'x-wallet-signature': await walletSignatureHeader(t, buyer) });
    const session = await startWalletSession(t, holder);
    expect(session.statusCode, session.body).toBe(201);

    // What a restart with a new APP_SECRET gives every reader of the secret.
    t.ctx.appSecret = randomBytes(32);

    expect((await t.app.inject({ url: new URL(oldDownload).pathname })).statusCode).toBe(404);
    const stale = await t.app.inject({
      url: buyUrl(fixture),
      headers: {
        'payment-signature': await signPayment(oldQuote, buyer),
        'x-quote-id': oldQuote.extra.quote_id,
      },
    });
    expectError(stale, 409, 'price_changed');
    expect(await t.rail.devnet!.balanceOf(buyer.address)).toBe(5_000_000n);
    const oldSession = await t.app.inject({
      url: '/api/entitlements',
      headers: { 'x-wallet-signature': session.json().wallet_session },
    });
    expectError(oldSession, 401, 'invalid_signature');

    const refetch = await t.app.inject({
      url: `${buyUrl(fixture)}/v/1.0.0`,
      headers: { 'x-wallet-signature': await walletSignatureHeader(t, holder) },
    });
    expect(refetch.statusCode, refetch.body).toBe(200);
    expect((await t.app.inject({ url: new URL(refetch.json().download_url).pathname })).statusCode).toBe(200);
    const bought = await buy(t, fixture, buyer);
    expect(bought.statusCode, bought.body).toBe(200);
    expect(await t.rail.devnet!.balanceOf(buyer.address)).toBe(4_000_000n);
  });
});
