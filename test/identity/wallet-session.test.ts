import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buy,
  buyUrl,
  createPaymentsApp,
  type ListingFixture,
  type PaymentsTestApp,
  publishListing,
} from '../purchases/support.js';
import { expectError, newWallet, signedChallenge, startWalletSession } from './support.js';

/**
 * Issue 38: a person reading their library in a browser signs one wallet_ownership challenge and
 * sends the wallet session it buys in X-Wallet-Signature, on every wallet route, for 30 minutes.
 */
describe('wallet sessions', () => {
  let t: PaymentsTestApp;
  let fixture: ListingFixture;
  const buyer = newWallet();

  beforeAll(async () => {
    t = await createPaymentsApp();
    fixture = await publishListing(t, { priceMicro: 1_000_000n });
    await t.rail.devnet!.fund(buyer.address, 5_000_000n);
    const paid = await buy(t, fixture, buyer);
    expect(paid.statusCode, paid.body).toBe(200);
  });
  afterAll(async () => t?.close());

  const startSession = (wallet = buyer, proof?: { nonce: string; signature: string }) =>
    startWalletSession(t, wallet, proof);

  it('one signature reads the entitlements, pages them and re-fetches, many times, until it expires', async () => {
    const res = await startSession();
    expect(res.statusCode, res.body).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    const session = res.json();
    expect(session).toMatchObject({ address: buyer.address });
    expect(Date.parse(session.expires_at) - t.clock.now().getTime()).toBe(30 * 60_000);
    const headers = { 'x-wallet-signature': session.wallet_session };
    for (let i = 0; i < 2; i++) {
      const owned = await t.app.inject({ url: '/api/entitlements', headers });
      expect(owned.statusCode, owned.body).toBe(200);
      expect(owned.json().items).toMatchObject([
        { owner: fixture.owner, slug: fixture.slug, version: '1.0.0' },
      ]);
      const fetched = await t.app.inject({ url: `${buyUrl(fixture)}/v/1.0.0`, headers });
      expect(fetched.statusCode, fetched.body).toBe(200);
      expect(fetched.json().kind).toBe('owned');
    }
    const status = await t.app.inject({ url: `/api/v/${fixture.owner}/${fixture.slug}`, headers });
    expect(status.json()).toMatchObject({ owned: true, entitled: true });

    t.clock.advance(30 * 60_000);
    const expired = await t.app.inject({ url: '/api/entitlements', headers });
    expectError(expired, 401, 'invalid_signature');
    expect(expired.json().message).toMatch(/expired/);
  });

  it('is refused when forged, tampered, or made from a used, foreign or wrong-purpose signature', async () => {
    const session = (await startSession()).json().wallet_session as string;
    const [kind, body, mac] = session.split('.') as [string, string, string];
    const other = newWallet();
    const forgedBody = Buffer.from(
      JSON.stringify({ address: other.address, expires: Date.now() + 3_600_000 }),
    ).toString('base64url');
    for (const value of [`${kind}.${forgedBody}.${mac}`, `${kind}.${body}.${'A'.repeat(43)}`, `${kind}.x`]) {
      const res = await t.app.inject({ url: '/api/entitlements', headers: { 'x-wallet-signature': value } });
      expectError(res, 401, 'invalid_signature');
    }
    // A quote token is signed with the same secret but is not a session.
    const quoteId = (await t.app.inject({ url: buyUrl(fixture) })).json().extra.quote_id;
    expectError(
      await t.app.inject({ url: '/api/entitlements', headers: { 'x-wallet-signature': quoteId } }),
      401,
      'invalid_signature',
    );

    const proof = await signedChallenge(t, buyer, 'wallet_ownership');
    expect((await startSession(buyer, proof)).statusCode).toBe(201);
    expectError(await startSession(buyer, proof), 401, 'invalid_signature');
    const signedByOther = await signedChallenge(t, buyer, 'wallet_ownership', { signer: other });
    expectError(await startSession(buyer, signedByOther), 401, 'invalid_signature');
    const stepUp = await signedChallenge(t, buyer, 'step_up');
    expectError(await startSession(buyer, stepUp), 401, 'invalid_signature');
    const malformed = await t.app.inject({
      method: 'POST',
      url: '/api/auth/wallet-sessions',
      payload: { address: 'nope', nonce: 'x', signature: '0x' },
    });
    expectError(malformed, 400, 'invalid_request');
  });

  it("a session is the wallet's proof, not its money: paying still needs the wallet's own authorization", async () => {
    const session = (await startSession()).json().wallet_session as string;
    const res = await t.app.inject({ url: buyUrl(fixture), headers: { 'x-wallet-signature': session } });
    // The holder of 1.0.0 is told it owns it: the same answer a signed challenge gets.
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().kind).toBe('owned');
    const stranger = (await startSession(newWallet())).json().wallet_session as string;
    const offer = await t.app.inject({ url: buyUrl(fixture), headers: { 'x-wallet-signature': stranger } });
    expect(offer.statusCode).toBe(402);
    expect(offer.json().extra.kind).toBe('new');
  });
});
