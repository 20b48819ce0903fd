import { and, eq } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { listings, payments, releases } from '../../src/db/schema/index.js';
import { BACKENDS } from '../support/db.js';
import { patchListingFixture } from '../support/listings.js';
import {
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
 * A new buyer's payment is decided on the cached sale head and its row written by an insert that
 * checks the offer still stands (`payments_insert_new_buyer`). Most of these change the listing
 * behind the cache (no listing event, so the cached head is stale) between the 402 and the
 * payment: the insert must refuse, and the answer must be the one the listing read afresh gives,
 * with nothing written and nothing charged. The rest pay as holders, replay, or meet a facilitator
 * that refuses or is down: answered as the fresh path answers, the facilitator asked once.
 */
describe.each(BACKENDS)('paying on the cached sale head on %s', (backend) => {
  let t: PaymentsTestApp;
  let statements: string[];
  beforeEach(async () => {
    t = await createPaymentsApp({ backend });
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await t.close();
  });

  /** Records the names of the hand-written statements the app runs from now on. */
  function watchStatements() {
    statements = [];
    const run = t.ctx.database.run.bind(t.ctx.database);
    vi.spyOn(t.ctx.database, 'run').mockImplementation((statement, params) => {
      statements.push(statement.name);
      return run(statement, params);
    });
  }

  function pay(fixture: ListingFixture, signature: string) {
    return t.app.inject({ url: buyUrl(fixture), headers: { 'payment-signature': signature } });
  }

  /** A 402 taken and signed by a new buyer (which primes the cached head), then `change`, then the payment. */
  async function payAfter(fixture: ListingFixture, change: () => Promise<unknown>) {
    const wallet = await fundedWallet(t, 10_000_000n);
    const paymentRequired = await quote(t, fixture);
    const signature = await signPayment(paymentRequired, wallet);
    await change();
    watchStatements();
    return { res: await pay(fixture, signature), wallet };
  }

  /** Counts the facilitator's verifies from now on; `down` makes each one throw, as an unreachable facilitator does. */
  function watchVerify(options: { down?: boolean } = {}) {
    const facilitator = t.rail.facilitator;
    const counted = { verifies: 0 };
    t.rail.facilitator = {
      verify: async (payload, requirements) => {
        counted.verifies += 1;
        if (options.down) throw new Error('fetch failed: the facilitator is unreachable');
        return facilitator.verify(payload, requirements);
      },
      settle: (payload, requirements) => facilitator.settle(payload, requirements),
      getSupported: () => facilitator.getSupported(),
    };
    return counted;
  }

  async function paymentRows(fixture: ListingFixture) {
    return t.ctx.database.db.select().from(payments).where(eq(payments.listingId, fixture.listingId));
  }

  it('a new buyer pays in two statements: the checked insert before the settle, the record after it', async () => {
    const fixture = await publishListing(t);
    const { res, wallet } = await payAfter(fixture, async () => {});
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ kind: 'new', version: '1.0.0' });
    expect(statements).toEqual(['payments_insert_new_buyer', 'payments_record_settlement']);
    const [row] = await paymentRows(fixture);
    expect(row).toMatchObject({ state: 'settled', kind: 'new', amountMicro: 2_000_000n, version: '1.0.0' });
    expect(await t.rail.devnet!.balanceOf(wallet.address)).toBe(8_000_000n);
  });

  it('a price changed behind the cache: price_changed with the new price, no row, no charge', async () => {
    const fixture = await publishListing(t, { priceMicro: 2_000_000n });
    const { res, wallet } = await payAfter(fixture, () =>
      t.ctx.database.db
        .update(listings)
        .set({ priceMicro: 3_000_000n })
        .where(eq(listings.id, fixture.listingId)),
    );
    expect(res.statusCode, res.body).toBe(409);
    expect(res.json().code).toBe('price_changed');
    expect(res.json().details.payment_required.accepts[0].amount).toBe('3000000');
    expect(statements).toContain('payments_insert_new_buyer');
    expect(await paymentRows(fixture)).toEqual([]);
    expect(await t.rail.devnet!.balanceOf(wallet.address)).toBe(10_000_000n);
  });

  it('an update price changed behind the cache: price_changed, no row', async () => {
    const fixture = await publishListing(t, { updatePriceMicro: 500_000n });
    const { res } = await payAfter(fixture, () =>
      t.ctx.database.db
        .update(listings)
        .set({ updatePriceMicro: 0n })
        .where(eq(listings.id, fixture.listingId)),
    );
    expect(res.statusCode, res.body).toBe(409);
    expect(res.json().details.payment_required.extra.update_price_micro).toBe('0');
    expect(statements).toContain('payments_insert_new_buyer');
    expect(await paymentRows(fixture)).toEqual([]);
  });

  it('a release that passed behind the cache: the quote for the older one is price_changed, no row', async () => {
    const fixture = await publishListing(t, { versions: ['1.0.0'] });
    const { addFixtureReleases } = await import('../support/listings.js');
    await addFixtureReleases(t, fixture, [{ version: '1.1.0', verdict: 'pending' }]);
    const { res } = await payAfter(fixture, () =>
      t.ctx.database.db
        .update(releases)
        .set({ verdict: 'pass' })
        .where(and(eq(releases.listingId, fixture.listingId), eq(releases.version, '1.1.0'))),
    );
    expect(res.statusCode, res.body).toBe(409);
    expect(res.json().code).toBe('price_changed');
    expect(res.json().details.payment_required.extra.version).toBe('1.1.0');
    expect(statements).toContain('payments_insert_new_buyer');
    expect(await paymentRows(fixture)).toEqual([]);
  });

  it('a listing retired behind the cache: 410 retired, no row, no charge', async () => {
    const fixture = await publishListing(t);
    const { res, wallet } = await payAfter(fixture, () =>
      t.ctx.database.db.update(listings).set({ status: 'retired' }).where(eq(listings.id, fixture.listingId)),
    );
    expect(res.statusCode, res.body).toBe(410);
    expect(res.json().code).toBe('retired');
    expect(statements).toContain('payments_insert_new_buyer');
    expect(await paymentRows(fixture)).toEqual([]);
    expect(await t.rail.devnet!.balanceOf(wallet.address)).toBe(10_000_000n);
  });

  it("a holder paying an anonymous 402's new-buyer quote is granted what it owns and charged nothing", async () => {
    const fixture = await publishListing(t);
    const wallet = await fundedWallet(t, 10_000_000n);
    expect((await buy(t, fixture, wallet)).statusCode).toBe(200);
    const anonymous = await quote(t, fixture);
    expect(anonymous.extra.kind).toBe('new');
    watchStatements();
    const res = await pay(fixture, await signPayment(anonymous, wallet));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().kind).toBe('owned');
    expect(statements).toContain('payments_insert_new_buyer');
    expect(await paymentRows(fixture)).toHaveLength(1);
    expect(await t.rail.devnet!.balanceOf(wallet.address)).toBe(8_000_000n);
  });

  it("a holder of an earlier version paying an anonymous 402's new-buyer quote: price_changed with its update 402, no row", async () => {
    const fixture = await publishListing(t, { priceMicro: 2_000_000n, updatePriceMicro: 500_000n });
    const wallet = await fundedWallet(t, 10_000_000n);
    expect((await buy(t, fixture, wallet)).statusCode).toBe(200);
    const { addRelease } = await import('./support.js');
    await addRelease(t, fixture, '1.1.0');
    const anonymous = await quote(t, fixture);
    expect(anonymous.extra).toMatchObject({ kind: 'new', version: '1.1.0' });
    watchStatements();
    const res = await pay(fixture, await signPayment(anonymous, wallet));
    expect(res.statusCode, res.body).toBe(409);
    expect(res.json().details.payment_required.extra).toMatchObject({ kind: 'update', from: '1.0.0' });
    expect(statements).toContain('payments_insert_new_buyer');
    expect(await paymentRows(fixture)).toHaveLength(1);
    expect(await t.rail.devnet!.balanceOf(wallet.address)).toBe(8_000_000n);
  });

  it('a replay of a settled authorization while its quote is current, the facilitator down: 409 replay, as before', async () => {
    const fixture = await publishListing(t);
    const wallet = await fundedWallet(t, 10_000_000n);
    const signature = await signPayment(await quote(t, fixture), wallet);
    expect((await pay(fixture, signature)).statusCode).toBe(200);
    const counted = watchVerify({ down: true });
    const replayed = await pay(fixture, signature);
    expect(replayed.statusCode, replayed.body).toBe(409);
    expect(replayed.json().code).toBe('replay');
    // Asked once, on the cached head; its failure left the answer to the fresh read.
    expect(counted.verifies).toBe(1);
    expect(await paymentRows(fixture)).toHaveLength(1);
    expect(await t.rail.devnet!.balanceOf(wallet.address)).toBe(8_000_000n);
  });

  it('an owner paying an anonymous quote while the facilitator is down: granted what it owns, as before', async () => {
    const fixture = await publishListing(t);
    const wallet = await fundedWallet(t, 10_000_000n);
    expect((await buy(t, fixture, wallet)).statusCode).toBe(200);
    const signature = await signPayment(await quote(t, fixture), wallet);
    const counted = watchVerify({ down: true });
    const res = await pay(fixture, signature);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().kind).toBe('owned');
    expect(counted.verifies).toBe(1);
  });

  it('a holder whose version came free, paying the new-buyer quote after a price was set: owned, nothing written', async () => {
    const fixture = await publishListing(t, { priceMicro: 0n, updatePriceMicro: 0n });
    const wallet = await fundedWallet(t, 10_000_000n);
    const free = await t.app.inject({
      url: buyUrl(fixture),
      headers: { 'x-wallet-signature': await walletSignatureHeader(t, wallet) },
    });
    expect(free.json().kind, free.body).toBe('free');
    await patchListingFixture(t, fixture.listingId, { priceMicro: 2_000_000n });
    const anonymous = await quote(t, fixture);
    expect(anonymous.extra).toMatchObject({ kind: 'new', version: '1.0.0' });
    watchStatements();
    const res = await pay(fixture, await signPayment(anonymous, wallet));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().kind).toBe('owned');
    expect(statements).toContain('payments_insert_new_buyer');
    expect(await paymentRows(fixture)).toEqual([]);
    expect(await t.rail.devnet!.balanceOf(wallet.address)).toBe(10_000_000n);
  });

  it('a new buyer without the funds: 402 insufficient_balance from one verify, nothing written', async () => {
    const fixture = await publishListing(t);
    const wallet = await fundedWallet(t, 0n);
    const signature = await signPayment(await quote(t, fixture), wallet);
    const counted = watchVerify();
    watchStatements();
    const res = await pay(fixture, signature);
    expect(res.statusCode, res.body).toBe(402);
    expect(res.json().code).toBe('insufficient_balance');
    expect(counted.verifies).toBe(1);
    // The refusal is answered by the fresh path, on the verify already made: no row is written.
    expect(statements).toEqual(['payments_head']);
    expect(await paymentRows(fixture)).toEqual([]);
    // Funded, the same authorization is a new payment again.
    await t.rail.devnet!.fund(wallet.address, 5_000_000n);
    const paid = await pay(fixture, signature);
    expect(paid.statusCode, paid.body).toBe(200);
    expect(await t.rail.devnet!.balanceOf(wallet.address)).toBe(3_000_000n);
  });

  it('a new buyer while the facilitator is down: an error, nothing written, and the authorization still usable', async () => {
    const fixture = await publishListing(t);
    const wallet = await fundedWallet(t, 10_000_000n);
    const signature = await signPayment(await quote(t, fixture), wallet);
    const facilitator = t.rail.facilitator;
    const counted = watchVerify({ down: true });
    const res = await pay(fixture, signature);
    expect(res.statusCode, res.body).toBeGreaterThanOrEqual(500);
    // The fresh path answers with the cached-head path's failed verify: the facilitator is asked once.
    expect(counted.verifies).toBe(1);
    expect(await paymentRows(fixture)).toEqual([]);
    t.rail.facilitator = facilitator;
    const paid = await pay(fixture, signature);
    expect(paid.statusCode, paid.body).toBe(200);
    expect(await t.rail.devnet!.balanceOf(wallet.address)).toBe(8_000_000n);
  });
});
