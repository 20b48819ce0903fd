import { eq } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listings } from '../../src/db/schema/index.js';
import { encodeWalletSignature } from '../../src/identity/wallet-signature.js';
import { VERSIONS_SOLD } from '../../src/platform/errors.js';
import { bearer, expectError, newWallet } from '../identity/support.js';
import { BACKENDS } from '../support/db.js';
import { patchListingFixture } from '../support/listings.js';
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
  walletSignatureHeader,
} from './support.js';

/** What buyers and agents are told of versions, owned or not, and of the challenge to sign next (issue 35). */
describe.each(BACKENDS)('versions and wallet refusals on %s', (backend) => {
  let t: PaymentsTestApp;
  beforeEach(async () => {
    t = await createPaymentsApp({ backend });
  });
  afterEach(async () => {
    await t.close();
  });

  const signed = async (wallet: ReturnType<typeof newWallet>) => ({
    'x-wallet-signature': await walletSignatureHeader(t, wallet),
  });
  const refetchUrl = (fixture: ListingFixture, version: string) => `${buyUrl(fixture)}/v/${version}`;

  it('tells a buyer asking for an older version, in one request, that it cannot be bought and what is on sale', async () => {
    const fixture = await publishListing(t, { versions: ['1.0.0', '1.1.0'] });
    const resource = `http://repo402.test${buyUrl(fixture)}`;
    // No signature at all: the refusal says 1.0.0 is not sold, and where 1.1.0 is.
    const anonymous = await t.app.inject({ url: refetchUrl(fixture, '1.0.0') });
    expectError(anonymous, 401, 'invalid_signature');
    expect(anonymous.json().message).toContain('1.0.0 is not for sale');
    expect(anonymous.json().message).toContain(VERSIONS_SOLD);
    expect(anonymous.json().details).toEqual({
      version: '1.0.0',
      for_sale: false,
      version_on_sale: '1.1.0',
      resource_url: resource,
    });
    // The version on sale: it is for sale, at the resource.
    const current = await t.app.inject({ url: refetchUrl(fixture, '1.1.0') });
    expect(current.json().details).toEqual({
      version: '1.1.0',
      for_sale: true,
      version_on_sale: '1.1.0',
      resource_url: resource,
    });
    // A wallet that signed but owns nothing: not_entitled, with the same, and a challenge for its next call.
    const wallet = newWallet();
    const mine = await t.app.inject({ url: refetchUrl(fixture, '1.0.0'), headers: await signed(wallet) });
    expectError(mine, 403, 'not_entitled');
    expect(mine.json().details).toMatchObject({
      version: '1.0.0',
      for_sale: false,
      version_on_sale: '1.1.0',
      wallet_challenge: { address: wallet.address, header: 'X-Wallet-Signature' },
    });
  });

  it('says a retired listing sells nothing, and still re-fetches what a wallet owns', async () => {
    const fixture = await publishListing(t);
    const wallet = await fundedWallet(t, 5_000_000n);
    expect((await buy(t, fixture, wallet)).statusCode).toBe(200);
    await t.ctx.database.db
      .update(listings)
      .set({ status: 'retired' })
      .where(eq(listings.id, fixture.listingId));
    t.ctx.listingEvents.announce(fixture.owner, fixture.slug);
    const anonymous = await t.app.inject({ url: refetchUrl(fixture, '1.0.0') });
    expect(anonymous.json().details).toEqual({ version: '1.0.0', for_sale: false });
    expect(anonymous.json().message).toContain('is not sold now');
    const owned = await t.app.inject({ url: refetchUrl(fixture, '1.0.0'), headers: await signed(wallet) });
    expect(owned.statusCode, owned.body).toBe(200);
  });

  it('hands a refused wallet a fresh challenge when the request names it, and the retry needs no other request', async () => {
    const fixture = await publishListing(t);
    const wallet = await fundedWallet(t, 5_000_000n);
    expect((await buy(t, fixture, wallet)).statusCode).toBe(200);
    // Routes where a signature is required: named by ?address=, with none, the refusal carries a
    // challenge for that wallet, and signing it is the whole retry.
    for (const url of [refetchUrl(fixture, '1.0.0'), '/api/entitlements']) {
      const named = await t.app.inject({ url: `${url}?address=${wallet.address}` });
      expectError(named, 401, 'invalid_signature');
      const challenge = named.json().details.wallet_challenge;
      expect(challenge).toMatchObject({
        address: wallet.address,
        nonce: expect.any(String),
        message: expect.stringContaining(wallet.address),
        expires_at: expect.any(String),
        header: 'X-Wallet-Signature',
      });
      expect(named.json().message).toContain(`Sign details.wallet_challenge.message with ${wallet.address}`);
      const header = encodeWalletSignature({
        address: wallet.address,
        nonce: challenge.nonce,
        signature: await wallet.signMessage({ message: challenge.message }),
      });
      const retried = await t.app.inject({ url, headers: { 'x-wallet-signature': header } });
      expect(retried.statusCode, `${url}: ${retried.body}`).toBe(200);
    }
    // Every wallet route, the optional ones too: a header that fails (here, used already) names
    // its wallet, and the refusal hands out a fresh challenge for it.
    for (const url of [
      refetchUrl(fixture, '1.0.0'),
      `/api/v/${fixture.owner}/${fixture.slug}`,
      '/api/entitlements',
      buyUrl(fixture),
    ]) {
      const header = await walletSignatureHeader(t, wallet);
      expect((await t.app.inject({ url, headers: { 'x-wallet-signature': header } })).statusCode, url).toBe(
        200,
      );
      const reused = await t.app.inject({ url, headers: { 'x-wallet-signature': header } });
      expectError(reused, 401, 'invalid_signature');
      expect(reused.json().details.wallet_challenge, url).toMatchObject({ address: wallet.address });
    }
    // A request that names no wallet, or something that is not an address, gets none.
    for (const query of ['', '?address=0x12', '?address=']) {
      const unnamed = await t.app.inject({ url: `/api/entitlements${query}` });
      expectError(unnamed, 401, 'invalid_signature');
      expect(unnamed.json().details?.wallet_challenge).toBeUndefined();
    }
  });

  it('hands a wallet named once the challenge for its next call in every answer, so it never asks for one', async () => {
    const fixture = await publishListing(t, { priceMicro: 2_000_000n, updatePriceMicro: 500_000n });
    const wallet = await fundedWallet(t, 10_000_000n);
    const sign = async (challenge: { address: string; nonce: string; message: string }) =>
      encodeWalletSignature({
        address: challenge.address as `0x${string}`,
        nonce: challenge.nonce,
        signature: await wallet.signMessage({ message: challenge.message }),
      });
    // Paying with ?address= on the resource: the grant carries the first challenge.
    const named = { ...fixture, slug: `${fixture.slug}?address=${wallet.address}` };
    const bought = await buy(t, named, wallet);
    expect(bought.statusCode, bought.body).toBe(200);
    let challenge = bought.json().wallet_challenge;
    expect(challenge).toMatchObject({ address: wallet.address, header: 'X-Wallet-Signature' });
    // Each signed answer hands out the next: re-fetch, version status, entitlements, the buy route.
    for (const url of [
      refetchUrl(fixture, '1.0.0'),
      `/api/v/${fixture.owner}/${fixture.slug}`,
      '/api/entitlements',
      buyUrl(fixture),
    ]) {
      const res = await t.app.inject({ url, headers: { 'x-wallet-signature': await sign(challenge) } });
      expect(res.statusCode, `${url}: ${res.body}`).toBe(200);
      expect(res.json().wallet_challenge.nonce, url).not.toBe(challenge.nonce);
      challenge = res.json().wallet_challenge;
    }
    // Version status named by ?address= alone: the anonymous answer, nothing about holdings, and a challenge.
    const status = await t.app.inject({
      url: `/api/v/${fixture.owner}/${fixture.slug}?address=${wallet.address}`,
    });
    expect(status.statusCode).toBe(200);
    expect(status.json()).not.toHaveProperty('owned');
    expect(status.json().wallet_challenge.address).toBe(wallet.address);
    expect(status.headers['cache-control']).toBe('private, no-store');
    // Unnamed, the shared answer carries none.
    const anonymous = await t.app.inject({ url: `/api/v/${fixture.owner}/${fixture.slug}` });
    expect(anonymous.json()).not.toHaveProperty('wallet_challenge');
  });

  it('lets a free claim hold the version claimed: a later paid version is an update 402 for the claimer', async () => {
    const fixture = await publishListing(t, { priceMicro: 0n, updatePriceMicro: 0n });
    const claimer = await fundedWallet(t, 5_000_000n);
    const claimed = await t.app.inject({ url: buyUrl(fixture), headers: await signed(claimer) });
    expect(claimed.json()).toMatchObject({ kind: 'free', version: '1.0.0' });
    // The creator prices the listing, then cuts 1.1.0: nobody paid for "updates included".
    await patchListingFixture(t, fixture.listingId, { priceMicro: 3_000_000n, updatePriceMicro: 1_000_000n });
    await addRelease(t, fixture, '1.1.0');
    const offer = await quote(t, fixture, await signed(claimer));
    expect(offer.extra).toMatchObject({ kind: 'update', from: '1.0.0', to: '1.1.0', version: '1.1.0' });
    expect(offer.accepts[0].amount).toBe('1000000');
    // The grant the 402 describes (x402 bazaar) is the one on sale, not a fixed example.
    expect(offer.extensions.bazaar.info.output.example).toMatchObject({ version: '1.1.0', kind: 'update' });
    // What was claimed stays the claimer's, free.
    const refetch = await t.app.inject({ url: refetchUrl(fixture, '1.0.0'), headers: await signed(claimer) });
    expect(refetch.statusCode).toBe(200);
  });

  it('tells the creator how many holders receive updates free: those who paid while updates were included', async () => {
    const fixture = await publishListing(t, { priceMicro: 1_000_000n, updatePriceMicro: 0n });
    const holders = () =>
      t.app.inject({
        url: `/api/listings/${fixture.listingId}/holders`,
        headers: bearer(fixture.creator.apiKey),
      });
    expect((await holders()).json()).toEqual({
      listing_id: fixture.listingId,
      holders: 0,
      updates_included: 0,
    });
    for (const wallet of [await fundedWallet(t, 5_000_000n), await fundedWallet(t, 5_000_000n)]) {
      expect((await buy(t, fixture, wallet)).statusCode).toBe(200);
    }
    await patchListingFixture(t, fixture.listingId, { priceMicro: 0n, updatePriceMicro: 500_000n });
    // A free claim now: a holder, without updates included.
    await t.app.inject({ url: buyUrl(fixture), headers: await signed(newWallet()) });
    expect((await holders()).json()).toEqual({
      listing_id: fixture.listingId,
      holders: 3,
      updates_included: 2,
    });
    // Another creator's key, and a listing that does not exist: 404, as every listing route.
    const stranger = await publishListing(t, { slug: 'other-kit' });
    const foreign = await t.app.inject({
      url: `/api/listings/${fixture.listingId}/holders`,
      headers: bearer(stranger.creator.apiKey),
    });
    expectError(foreign, 404, 'not_found');
    expect(foreign.body).not.toContain(fixture.listingId);
    expectError(
      await t.app.inject({ url: `/api/listings/${fixture.listingId}/holders` }),
      401,
      'invalid_key',
    );
  });

  it('labels release-log prices as the ones in force now, and records what each release first went on sale at', async () => {
    const fixture = await publishListing(t, { priceMicro: 2_000_000n, updatePriceMicro: 500_000n });
    const firstAt = t.clock.now().toISOString();
    await patchListingFixture(t, fixture.listingId, { priceMicro: 3_000_000n, updatePriceMicro: 700_000n });
    t.clock.advance(60_000);
    await addRelease(t, fixture, '1.1.0');
    const log = await t.app.inject({ url: `/api/v/${fixture.owner}/${fixture.slug}/releases` });
    expect(log.json().version_on_sale).toBe('1.1.0');
    const [newest, oldest] = log.json().releases;
    expect([newest.on_sale, oldest.on_sale]).toEqual([true, false]);
    for (const release of [newest, oldest]) {
      expect(release).toMatchObject({ price_micro: '3000000', update_price_micro: '700000' });
    }
    expect(oldest.first_on_sale).toEqual({
      at: firstAt,
      price_micro: '2000000',
      update_price_micro: '500000',
    });
    expect(newest.first_on_sale).toEqual({
      at: t.clock.now().toISOString(),
      price_micro: '3000000',
      update_price_micro: '700000',
    });
    // A passing release cut out of order, below the one on sale, never goes on sale.
    await addRelease(t, fixture, '1.0.5');
    const again = await t.app.inject({ url: `/api/v/${fixture.owner}/${fixture.slug}/releases` });
    const skipped = again.json().releases.find((release: { version: string }) => release.version === '1.0.5');
    expect(skipped.first_on_sale).toBeUndefined();
  });
});
