import { HTTPFacilitatorClient } from '@x402/core/http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ledgerEntries, payments, purchases } from '../../src/db/schema/index.js';
import { devnetFacilitator } from '../../src/devnet/facilitator.js';
import { BACKENDS } from '../support/db.js';
import { type FaultyFacilitator, startFaultyFacilitator } from '../support/faulty-facilitator.js';
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

/**
 * One buyer never pays twice for one version: several authorizations with different nonces for
 * the same purchase, sent at once, settle once. The guarantee is a unique index on the payments
 * table, so it holds across API processes too (see cross-process.test.ts).
 */
describe.each(BACKENDS)('one payment per buyer and version on %s', (backend) => {
  let t: PaymentsTestApp;
  let fixture: ListingFixture;
  beforeEach(async () => {
    t = await createPaymentsApp({ backend, env: { SETTLEMENT_TIMEOUT_MS: '20000' } });
    fixture = await publishListing(t, { priceMicro: 2_000_000n, versions: ['1.0.0'] });
  });
  afterEach(async () => {
    await t.close();
  });

  const db = () => t.ctx.database.db;

  /** `count` payments for the current 402, each with its own nonce, as a careless client makes them. */
  async function signedPayments(wallet: Awaited<ReturnType<typeof fundedWallet>>, count: number) {
    const paymentRequired = await quote(t, fixture, {
      'x-wallet-signature': await walletSignatureHeader(t, wallet),
    });
    return Promise.all(
      Array.from({ length: count }, async () => ({
        'payment-signature': await signPayment(paymentRequired, wallet),
        'x-quote-id': paymentRequired.extra.quote_id as string,
      })),
    );
  }

  it('ten payments with different nonces at once: one transfer, one purchase, one credit', async () => {
    const wallet = await fundedWallet(t, 50_000_000n);
    const all = await signedPayments(wallet, 10);
    const responses = await Promise.all(
      all.map((headers) => t.app.inject({ url: buyUrl(fixture), headers })),
    );
    const statuses = responses.map((res) => `${res.statusCode} ${res.json().code ?? res.json().kind}`);
    // The first settles (a `new` grant); the others are told it is settling, or, once it has
    // settled, given the version they now own. None of them is settled.
    expect(
      statuses.filter((s) => s === '200 new'),
      statuses.join(', '),
    ).toHaveLength(1);
    for (const status of statuses.filter((s) => s !== '200 new')) {
      expect(['402 settlement_pending', '200 owned']).toContain(status);
    }
    expect(await t.rail.devnet!.balanceOf(wallet.address)).toBe(48_000_000n);
    expect(await db().select().from(purchases)).toHaveLength(1);
    expect(await db().select().from(ledgerEntries)).toHaveLength(1);

    // Each of the other authorizations, retried, is the free grant of what the buyer owns.
    for (const headers of all) {
      const again = await t.app.inject({ url: buyUrl(fixture), headers });
      expect([200, 409], again.body).toContain(again.statusCode);
      if (again.statusCode === 200) expect(again.json().kind).toBe('owned');
      else expect(again.json().details.purchase.version).toBe('1.0.0');
    }
    expect(await t.rail.devnet!.balanceOf(wallet.address)).toBe(48_000_000n);
    expect(await db().select().from(purchases)).toHaveLength(1);
  });

  it('an update bought three times at once by a holder settles once', async () => {
    const wallet = await fundedWallet(t, 50_000_000n);
    expect((await buy(t, fixture, wallet)).statusCode).toBe(200);
    await addRelease(t, fixture, '1.1.0');
    const all = await signedPayments(wallet, 3);
    const responses = await Promise.all(
      all.map((headers) => t.app.inject({ url: buyUrl(fixture), headers })),
    );
    const statuses = responses.map((res) => `${res.statusCode} ${res.json().code ?? res.json().kind}`);
    expect(
      statuses.filter((s) => s === '200 update'),
      statuses.join(', '),
    ).toHaveLength(1);
    // 2.00 for 1.0.0, then 0.50 once for the update.
    expect(await t.rail.devnet!.balanceOf(wallet.address)).toBe(47_500_000n);
    expect(await db().select().from(purchases)).toHaveLength(2);
  });

  it('a payment that failed frees the slot: the buyer pays with another authorization', async () => {
    const facilitator: FaultyFacilitator = await startFaultyFacilitator(devnetFacilitator(t.rail.devnet!));
    try {
      t.rail.facilitator = new HTTPFacilitatorClient({ url: facilitator.url });
      const wallet = await fundedWallet(t, 2_000_000n);
      const [first, second] = await signedPayments(wallet, 2);
      // The facilitator refuses the first settle outright (nothing broadcast): the row is failed.
      facilitator.mode = 'refuse';
      const refused = await t.app.inject({ url: buyUrl(fixture), headers: first! });
      expect(refused.json().code).toBe('insufficient_balance');
      facilitator.mode = 'ok';
      const paid = await t.app.inject({ url: buyUrl(fixture), headers: second! });
      expect(paid.statusCode, paid.body).toBe(200);
      expect(paid.json().kind).toBe('new');
      // The first authorization, retried now, does not pay again: its buyer owns the version.
      const retried = await t.app.inject({ url: buyUrl(fixture), headers: first! });
      expect(retried.statusCode, retried.body).toBe(200);
      expect(retried.json().kind).toBe('owned');
      expect(await t.rail.devnet!.balanceOf(wallet.address)).toBe(0n);
      expect((await db().select().from(payments)).map((row) => row.state).sort()).toEqual([
        'failed',
        'settled',
      ]);
    } finally {
      await facilitator.close();
    }
  });

  it('a payment verified after another of its buyer spent the balance waits for that one, never insufficient_balance', async () => {
    const facilitator: FaultyFacilitator = await startFaultyFacilitator(devnetFacilitator(t.rail.devnet!));
    try {
      t.rail.facilitator = new HTTPFacilitatorClient({ url: facilitator.url });
      // Exactly the price: once the first transfer lands, the second authorization's verify
      // finds an empty wallet.
      const wallet = await fundedWallet(t, 2_000_000n);
      const [first, second] = await signedPayments(wallet, 2);
      // The first settle lands on chain at once and its answer comes a second later.
      facilitator.mode = 'delay';
      facilitator.delayMs = 1000;
      const firstAnswer = t.app.inject({ url: buyUrl(fixture), headers: first! });
      while (facilitator.settled === 0) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await t.rail.devnet!.balanceOf(wallet.address)).toBe(0n);
      const secondAnswer = await t.app.inject({ url: buyUrl(fixture), headers: second! });
      expect(`${secondAnswer.statusCode} ${secondAnswer.json().code ?? secondAnswer.json().kind}`).toMatch(
        /^(402 settlement_pending|200 owned)$/,
      );
      expect((await firstAnswer).json().kind).toBe('new');
      expect(await db().select().from(purchases)).toHaveLength(1);
    } finally {
      await facilitator.close();
    }
  });
});
