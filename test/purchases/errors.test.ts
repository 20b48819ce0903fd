import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { HTTPFacilitatorClient } from '@x402/core/http';
import { eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { listings, payments, purchases } from '../../src/db/schema/index.js';
import { devnetFacilitator } from '../../src/devnet/facilitator.js';
import { newWallet } from '../identity/support.js';
import { BACKENDS } from '../support/db.js';
import { startFaultyFacilitator } from '../support/faulty-facilitator.js';
import {
  buy,
  buyUrl,
  createPaymentsApp,
  fundedWallet,
  type PaymentsTestApp,
  publishListing,
  quote,
  signAuthorization,
  signPayment,
  walletSignatureHeader,
} from './support.js';

/** Every payment error code of SPEC.md, produced through the real routes. */
describe.each(BACKENDS)('payment errors on %s', (backend) => {
  let t: PaymentsTestApp;
  afterEach(async () => {
    await t?.close();
  });

  async function pay(fixture: Awaited<ReturnType<typeof publishListing>>, header: string, quoteId?: string) {
    return t.app.inject({
      url: buyUrl(fixture),
      headers: { 'payment-signature': header, ...(quoteId ? { 'x-quote-id': quoteId } : {}) },
    });
  }

  function expectCode(res: { statusCode: number; json(): { code: string } }, status: number, code: string) {
    expect(res.statusCode, JSON.stringify(res.json())).toBe(status);
    expect(res.json().code).toBe(code);
  }

  it('insufficient_balance, expired_authorization, authorization_mismatch, invalid_signature, replay', async () => {
    t = await createPaymentsApp({ backend });
    const fixture = await publishListing(t, { priceMicro: 2_000_000n });
    const pr = await quote(t, fixture);
    const q = pr.extra.quote_id;

    const poor = await fundedWallet(t, 1_000_000n);
    expectCode(await pay(fixture, await signPayment(pr, poor), q), 402, 'insufficient_balance');

    const wallet = await fundedWallet(t, 5_000_000n);
    const past = BigInt(Math.floor(Date.now() / 1000) - 5);
    expectCode(
      await pay(fixture, await signAuthorization(pr, wallet, { validBefore: past }), q),
      402,
      'expired_authorization',
    );
    expectCode(
      await pay(fixture, await signAuthorization(pr, wallet, { value: 1n }), q),
      400,
      'authorization_mismatch',
    );
    expectCode(
      await pay(fixture, await signAuthorization(pr, wallet, { to: newWallet().address }), q),
      400,
      'authorization_mismatch',
    );
    const future = BigInt(Math.floor(Date.now() / 1000) + 3600);
    expectCode(
      await pay(fixture, await signAuthorization(pr, wallet, { validAfter: future }), q),
      400,
      'authorization_mismatch',
    );
    expectCode(
      await pay(fixture, await signAuthorization(pr, wallet, {}, newWallet()), q),
      401,
      'invalid_signature',
    );
    expect(await t.rail.devnet!.balanceOf(wallet.address)).toBe(5_000_000n);

    const header = await signAuthorization(pr, wallet);
    expect((await pay(fixture, header, q)).statusCode).toBe(200);
    const replay = await pay(fixture, header, q);
    expectCode(replay, 409, 'replay');
    expect(replay.json().details.purchase).toMatchObject({ version: '1.0.0', kind: 'new' });
    expect(await t.rail.devnet!.balanceOf(wallet.address)).toBe(3_000_000n);
  });

  it('invalid_signature for an authorization its from did not sign: no owner grant, no free record', async () => {
    t = await createPaymentsApp({ backend });
    const fixture = await publishListing(t, { priceMicro: 2_000_000n });
    const holder = await fundedWallet(t, 5_000_000n);
    expect((await buy(t, fixture, holder)).statusCode).toBe(200);
    const attacker = newWallet();
    const pr = await quote(t, fixture);
    // Naming a holder as the payer is not proving to be it: no `owned` grant without its signature.
    const forged = await signAuthorization(pr, holder, {}, attacker);
    expectCode(await pay(fixture, forged, pr.extra.quote_id), 401, 'invalid_signature');

    const free = await publishListing(t, { priceMicro: 0n, slug: 'free-kit' });
    expectCode(await pay(free, forged), 401, 'invalid_signature');
    const db = t.ctx.database.db;
    expect(await db.select().from(purchases).where(eq(purchases.listingId, free.listingId))).toEqual([]);
  });

  it("invalid_signature when the facilitator's verify names another payer, or refuses an unsigned authorization", async () => {
    t = await createPaymentsApp({ backend });
    const facilitator = await startFaultyFacilitator(devnetFacilitator(t.rail.devnet!));
    t.rail.facilitator = new HTTPFacilitatorClient({ url: facilitator.url });
    try {
      const fixture = await publishListing(t, { priceMicro: 2_000_000n });
      const pr = await quote(t, fixture);
      const wallet = await fundedWallet(t, 5_000_000n);
      // A verify is the proof of `from` for a new priced payment: one that vouches for someone else is none.
      facilitator.verifyAnswer = { isValid: true, payer: newWallet().address };
      expectCode(
        await pay(fixture, await signPayment(pr, wallet), pr.extra.quote_id),
        401,
        'invalid_signature',
      );
      // A refusal that says nothing of the signature (a used nonce) does not let a forged `from`
      // take a row, nor the slot of the wallet it names.
      facilitator.verifyAnswer = { isValid: false, invalidReason: 'invalid_exact_evm_nonce_already_used' };
      const forged = await signAuthorization(pr, wallet, {}, newWallet());
      expectCode(await pay(fixture, forged, pr.extra.quote_id), 401, 'invalid_signature');
      expect(await t.ctx.database.db.select().from(payments)).toEqual([]);
      expect(facilitator.settles).toBe(0);
      facilitator.verifyAnswer = undefined;
      expect((await pay(fixture, await signPayment(pr, wallet), pr.extra.quote_id)).statusCode).toBe(200);
      expect(await t.rail.devnet!.balanceOf(wallet.address)).toBe(3_000_000n);
    } finally {
      await facilitator.close();
    }
  });

  it('an authorization proves its wallet for an owner grant only if it pays this service and is still valid', async () => {
    t = await createPaymentsApp({ backend });
    const fixture = await publishListing(t, { priceMicro: 2_000_000n });
    const holder = await fundedWallet(t, 5_000_000n);
    expect((await buy(t, fixture, holder)).statusCode).toBe(200);
    const pr = await quote(t, fixture);
    // The holder paying someone else, as anyone can read it from the chain once executed.
    const elsewhere = await signAuthorization(pr, holder, { to: newWallet().address });
    const refused = await pay(fixture, elsewhere, pr.extra.quote_id);
    expectCode(refused, 400, 'authorization_mismatch');
    expect(refused.json().details.mismatched).toEqual(['authorization.to']);
    const past = BigInt(Math.floor(t.clock.now().getTime() / 1000)) - 10n;
    const expired = await signAuthorization(pr, holder, { validBefore: past });
    expectCode(await pay(fixture, expired, pr.extra.quote_id), 402, 'expired_authorization');
    // Neither was a grant; the holder's own fresh authorization is, and nothing is charged.
    const fresh = await pay(fixture, await signAuthorization(pr, holder), pr.extra.quote_id);
    expect(fresh.statusCode, fresh.body).toBe(200);
    expect(fresh.json().kind).toBe('owned');
    expect(await t.rail.devnet!.balanceOf(holder.address)).toBe(3_000_000n);
  });

  /** The header with its JSON payload changed by `edit`, re-encoded as a client would send it. */
  function edited(
    header: string,
    edit: (payload: {
      payload: { signature: string };
      resource: { url: string };
      accepted: Record<string, unknown>;
    }) => void,
  ): string {
    const payload = JSON.parse(Buffer.from(header, 'base64').toString('utf8'));
    edit(payload);
    return Buffer.from(JSON.stringify(payload), 'utf8').toString('base64');
  }

  it('invalid_signature (not a 500) for a signature marked ERC-6492 that does not decode; nothing is written', async () => {
    t = await createPaymentsApp({ backend });
    const fixture = await publishListing(t, { priceMicro: 2_000_000n });
    const pr = await quote(t, fixture);
    const wallet = await fundedWallet(t, 5_000_000n);
    const header = await signPayment(pr, wallet);
    const magic = '6492'.repeat(16);
    const wrapped = edited(header, (payload) => {
      payload.payload.signature = `${payload.payload.signature}${magic}`;
    });
    expectCode(await pay(fixture, wrapped, pr.extra.quote_id), 401, 'invalid_signature');
    expect(await t.ctx.database.db.select().from(payments)).toEqual([]);
    expect(await t.rail.devnet!.balanceOf(wallet.address)).toBe(5_000_000n);
    // The authorization itself was never used: signed properly, it pays.
    expect((await pay(fixture, header, pr.extra.quote_id)).statusCode).toBe(200);
  });

  it("authorization_mismatch for a payment echoing another listing's resource, at the same price and with this listing's quote", async () => {
    t = await createPaymentsApp({ backend });
    const dear = await publishListing(t, { priceMicro: 2_000_000n, slug: 'dear-kit' });
    const other = await publishListing(t, { priceMicro: 2_000_000n, slug: 'other-kit' });
    const wallet = await fundedWallet(t, 5_000_000n);
    const header = await signPayment(await quote(t, dear), wallet);
    const otherQuote = (await quote(t, other)).extra.quote_id;
    const res = await pay(other, header, otherQuote);
    expectCode(res, 400, 'authorization_mismatch');
    expect(res.json().details.mismatched).toEqual(['resource']);
    // One echo rewritten to the other listing, the other still naming the first: refused the same.
    const resourceRewritten = edited(header, (payload) => {
      payload.resource.url = `${t.ctx.config.baseUrl}${buyUrl(other)}`;
    });
    expectCode(await pay(other, resourceRewritten, otherQuote), 400, 'authorization_mismatch');
    const aliasRewritten = edited(header, (payload) => {
      payload.accepted.resource = `${t.ctx.config.baseUrl}${buyUrl(other)}`;
    });
    expectCode(await pay(other, aliasRewritten, otherQuote), 400, 'authorization_mismatch');
    expect(await t.ctx.database.db.select().from(payments)).toEqual([]);
    expect(await t.rail.devnet!.balanceOf(wallet.address)).toBe(5_000_000n);
    // On the listing it was signed for, it pays.
    expect((await pay(dear, header, (await quote(t, dear)).extra.quote_id)).statusCode).toBe(200);
  });

  it('HEAD never pays nor uses up a wallet challenge: it answers as the anonymous GET', async () => {
    t = await createPaymentsApp({ backend });
    const fixture = await publishListing(t, { priceMicro: 2_000_000n });
    const pr = await quote(t, fixture);
    const wallet = await fundedWallet(t, 5_000_000n);
    const header = await signPayment(pr, wallet);
    const head = await t.app.inject({
      method: 'HEAD',
      url: buyUrl(fixture),
      headers: { 'payment-signature': header, 'x-quote-id': pr.extra.quote_id },
    });
    expect(head.statusCode).toBe(402);
    expect(head.headers['payment-required']).toBeTruthy();
    expect(head.headers['payment-response']).toBeUndefined();
    expect(await t.ctx.database.db.select().from(payments)).toEqual([]);
    expect(await t.rail.devnet!.balanceOf(wallet.address)).toBe(5_000_000n);
    const paid = await pay(fixture, header, pr.extra.quote_id);
    expect(paid.statusCode).toBe(200);

    const signature = await walletSignatureHeader(t, wallet);
    const headRefetch = await t.app.inject({
      method: 'HEAD',
      url: `${buyUrl(fixture)}/v/1.0.0`,
      headers: { 'x-wallet-signature': signature },
    });
    expect(headRefetch.statusCode).toBe(401);
    // The challenge HEAD carried is still unused: the GET it was made for gets the grant.
    const refetch = await t.app.inject({
      url: `${buyUrl(fixture)}/v/1.0.0`,
      headers: { 'x-wallet-signature': signature },
    });
    expect(refetch.statusCode, refetch.body).toBe(200);
  });

  it("authorization_mismatch for an authorization recorded for another listing, whatever its row's state", async () => {
    t = await createPaymentsApp({ backend });
    const cheap = await publishListing(t, { priceMicro: 10_000n, slug: 'cheap-kit' });
    const dear = await publishListing(t, { priceMicro: 9_000_000n, slug: 'dear-kit' });
    const wallet = await fundedWallet(t, 1_000_000n);
    const pr = await quote(t, cheap);
    const header = await signAuthorization(pr, wallet);
    expect((await pay(cheap, header, pr.extra.quote_id)).statusCode).toBe(200);
    expectCode(await pay(dear, header), 400, 'authorization_mismatch');
    // A row the chain has not consumed (failed, or still settling) stays bound to its listing too.
    const db = t.ctx.database.db;
    await db.update(payments).set({ state: 'failed' }).where(eq(payments.listingId, cheap.listingId));
    const refused = await pay(dear, header);
    expectCode(refused, 400, 'authorization_mismatch');
    expect(refused.json().details).toEqual({ mismatched: ['listing'] });
    // It points the buyer to what the wallet holds, without naming the listing to whoever presents
    // the authorization (it is public on chain once settled).
    expect(refused.json().message).toContain('/api/entitlements');
    expect(refused.body).not.toContain('cheap-kit');
    expect(await db.select().from(purchases).where(eq(purchases.listingId, dear.listingId))).toEqual([]);
    expect(await t.rail.devnet!.balanceOf(wallet.address)).toBe(990_000n);
  });

  it('price_changed: no quote, a changed price, an expired quote, a new-quote payer who holds an earlier version', async () => {
    t = await createPaymentsApp({ backend });
    const fixture = await publishListing(t, { priceMicro: 2_000_000n, updatePriceMicro: 500_000n });
    const wallet = await fundedWallet(t, 10_000_000n);
    const pr = await quote(t, fixture);
    expectCode(await pay(fixture, await signAuthorization(pr, wallet)), 409, 'price_changed');
    expectCode(await pay(fixture, await signPayment(pr, wallet), 'q1.forged.quote'), 409, 'price_changed');

    await t.ctx.database.db
      .update(listings)
      .set({ priceMicro: 3_000_000n })
      .where(eq(listings.id, fixture.listingId));
    t.ctx.listingEvents.announce(fixture.owner, fixture.slug);
    const changed = await pay(fixture, await signPayment(pr, wallet), pr.extra.quote_id);
    expectCode(changed, 409, 'price_changed');
    expect(changed.json().details.payment_required.accepts[0].amount).toBe('3000000');

    const fresh = await quote(t, fixture);
    t.clock.advance(301_000);
    // The quote expired; the authorization, signed for the later moment, has not.
    const validBefore = BigInt(Math.floor(t.clock.now().getTime() / 1000)) + 300n;
    expectCode(
      await pay(fixture, await signAuthorization(fresh, wallet, { validBefore }), fresh.extra.quote_id),
      409,
      'price_changed',
    );
    t.clock.set(new Date());

    // The wallet buys 1.0.0; after 1.1.0 is out, paying a `new` quote answers with the `update` 402.
    expect((await buy(t, fixture, wallet)).statusCode).toBe(200);
    const { addRelease } = await import('./support.js');
    await addRelease(t, fixture, '1.1.0');
    const anonymous = await quote(t, fixture);
    expect(anonymous.extra.kind).toBe('new');
    const wrongKind = await pay(fixture, await signPayment(anonymous, wallet), anonymous.extra.quote_id);
    expectCode(wrongKind, 409, 'price_changed');
    expect(wrongKind.json().details.payment_required.extra).toMatchObject({
      kind: 'update',
      from: '1.0.0',
      to: '1.1.0',
    });
    expect(wrongKind.json().details.payment_required.accepts[0].amount).toBe('500000');
  });

  it('settlement_pending and settlement_timeout from a facilitator that fails or is slow', async () => {
    t = await createPaymentsApp({ backend, env: { SETTLEMENT_TIMEOUT_MS: '500' } });
    const facilitator = await startFaultyFacilitator(devnetFacilitator(t.rail.devnet!));
    t.rail.facilitator = new HTTPFacilitatorClient({ url: facilitator.url });
    try {
      const fixture = await publishListing(t);
      const pr = await quote(t, fixture);
      facilitator.mode = 'fail';
      expectCode(
        await pay(fixture, await signPayment(pr, await fundedWallet(t, 5_000_000n)), pr.extra.quote_id),
        402,
        'settlement_pending',
      );
      facilitator.mode = 'delay';
      facilitator.delayMs = 1500;
      expectCode(
        await pay(fixture, await signPayment(pr, await fundedWallet(t, 5_000_000n)), pr.extra.quote_id),
        504,
        'settlement_timeout',
      );
      await new Promise((resolve) => setTimeout(resolve, 1500));
    } finally {
      await facilitator.close();
    }
  });

  it('sanctioned_counterparty for a sanctioned payer or wallet, blocked_jurisdiction by country header', async () => {
    const sanctioned = newWallet();
    const dir = (await import('node:os')).tmpdir();
    const file = path.join(dir, `sanctions-${sanctioned.address}.txt`);
    await writeFile(file, `# test list\n${sanctioned.address.toLowerCase()}\n`);
    t = await createPaymentsApp({
      backend,
      env: { SANCTIONS_FILE: file, COUNTRY_HEADER: 'CF-IPCountry', BLOCKED_COUNTRIES: 'KP,IR' },
    });
    const fixture = await publishListing(t);
    await t.rail.devnet!.fund(sanctioned.address, 5_000_000n);
    const pr = await quote(t, fixture);
    expectCode(
      await pay(fixture, await signPayment(pr, sanctioned), pr.extra.quote_id),
      403,
      'sanctioned_counterparty',
    );
    expect(await t.rail.devnet!.balanceOf(sanctioned.address)).toBe(5_000_000n);
    const withWallet = await t.app.inject({
      url: buyUrl(fixture),
      headers: { 'x-wallet-signature': await walletSignatureHeader(t, sanctioned) },
    });
    expectCode(withWallet, 403, 'sanctioned_counterparty');
    expectCode(
      await t.app.inject({ url: buyUrl(fixture), headers: { 'cf-ipcountry': 'kp' } }),
      451,
      'blocked_jurisdiction',
    );
    expect((await t.app.inject({ url: buyUrl(fixture), headers: { 'cf-ipcountry': 'DE' } })).statusCode).toBe(
      402,
    );
  });

  it('not_found for unknown listings, drafts and versions; retired (410) for a buy; not_entitled for a re-fetch', async () => {
    t = await createPaymentsApp({ backend });
    const fixture = await publishListing(t);
    expectCode(await t.app.inject({ url: `/api/r/${fixture.owner}/nope` }), 404, 'not_found');
    const draft = await publishListing(t, { slug: 'draft-kit', creator: fixture.creator });
    await t.ctx.database.db.update(listings).set({ status: 'draft' }).where(eq(listings.id, draft.listingId));
    expectCode(await t.app.inject({ url: buyUrl(draft) }), 404, 'not_found');
    const wallet = await fundedWallet(t, 0n);
    const refetch = (version: string) =>
      walletSignatureHeader(t, wallet).then((header) =>
        t.app.inject({ url: `${buyUrl(fixture)}/v/${version}`, headers: { 'x-wallet-signature': header } }),
      );
    expectCode(await refetch('1.0.0'), 403, 'not_entitled');
    expectCode(await refetch('9.9.9'), 404, 'not_found');
    expectCode(await t.app.inject({ url: `${buyUrl(fixture)}/v/1.0.0` }), 401, 'invalid_signature');
    await t.ctx.database.db
      .update(listings)
      .set({ status: 'retired' })
      .where(eq(listings.id, fixture.listingId));
    // As retiring does: every process drops what it read of the listing.
    t.ctx.listingEvents.announce(fixture.owner, fixture.slug);
    expectCode(await t.app.inject({ url: buyUrl(fixture) }), 410, 'retired');
    expect(await t.ctx.database.db.select().from(purchases)).toHaveLength(0);
  });
});
