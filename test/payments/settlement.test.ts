import { HTTPFacilitatorClient } from '@x402/core/http';
import { eq } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { payments, purchases } from '../../src/db/schema/index.js';
import { devnetFacilitator } from '../../src/payments/devnet/facilitator.js';
import { reconcilePayments } from '../../src/payments/reconcile.js';
import { BACKENDS } from '../support/db.js';
import { type FaultyFacilitator, startFaultyFacilitator } from '../support/faulty-facilitator.js';
import {
  buyUrl,
  createPaymentsApp,
  fundedWallet,
  type ListingFixture,
  type PaymentsTestApp,
  publishListing,
  quote,
  signPayment,
} from './support.js';

describe.each(BACKENDS)('settlement on %s', (backend) => {
  let t: PaymentsTestApp;
  let facilitator: FaultyFacilitator;
  let fixture: ListingFixture;
  beforeEach(async () => {
    t = await createPaymentsApp({ backend, env: { SETTLEMENT_TIMEOUT_MS: '1000' } });
    facilitator = await startFaultyFacilitator(devnetFacilitator(t.rail.devnet!));
    t.rail.facilitator = new HTTPFacilitatorClient({ url: facilitator.url });
    fixture = await publishListing(t, { priceMicro: 2_000_000n });
  });
  afterEach(async () => {
    await facilitator.close();
    await t.close();
  });

  async function signedBuy(wallet: Awaited<ReturnType<typeof fundedWallet>>) {
    const paymentRequired = await quote(t, fixture);
    const headers = {
      'payment-signature': await signPayment(paymentRequired, wallet),
      'x-quote-id': paymentRequired.extra.quote_id as string,
    };
    return { headers, send: () => t.app.inject({ url: buyUrl(fixture), headers }) };
  }

  const purchaseCount = async () => (await t.ctx.database.db.select().from(purchases)).length;
  const paymentRows = () => t.ctx.database.db.select().from(payments);

  it('a failing facilitator: 402 settlement_pending, nothing charged or granted; the retry settles once', async () => {
    const wallet = await fundedWallet(t, 5_000_000n);
    const { send } = await signedBuy(wallet);
    facilitator.mode = 'fail';
    const failed = await send();
    expect(failed.statusCode).toBe(402);
    expect(failed.json().code).toBe('settlement_pending');
    expect(await purchaseCount()).toBe(0);
    expect(await t.rail.devnet!.balanceOf(wallet.address)).toBe(5_000_000n);
    expect((await paymentRows())[0]).toMatchObject({ state: 'settling' });

    facilitator.mode = 'ok';
    const retried = await send();
    expect(retried.statusCode, retried.body).toBe(200);
    expect(await t.rail.devnet!.balanceOf(wallet.address)).toBe(3_000_000n);
    expect((await send()).json().code).toBe('replay');
    expect(await purchaseCount()).toBe(1);
  });

  it('a settle slower than the timeout: 504 settlement_timeout, then the late success is recorded, once', async () => {
    const wallet = await fundedWallet(t, 5_000_000n);
    const { send } = await signedBuy(wallet);
    facilitator.mode = 'delay';
    facilitator.delayMs = 2000;
    const timedOut = await send();
    expect(timedOut.statusCode).toBe(504);
    expect(timedOut.json().code).toBe('settlement_timeout');
    expect(await purchaseCount()).toBe(0);
    // A retry while the first attempt is still in flight waits for it rather than settling again.
    const retried = await send();
    expect([409, 402]).toContain(retried.statusCode);
    for (let i = 0; i < 100 && (await purchaseCount()) === 0; i += 1)
      await new Promise((r) => setTimeout(r, 50));
    expect(await purchaseCount()).toBe(1);
    expect(facilitator.settled).toBe(1);
    const replay = await send();
    expect(replay.statusCode).toBe(409);
    expect(replay.json().code).toBe('replay');
    expect(await t.rail.devnet!.balanceOf(wallet.address)).toBe(3_000_000n);
  });

  it('a settle whose answer is lost, pending or without a hash: the chain decides, and the retry grants without paying twice', async () => {
    for (const mode of ['lost', 'pending', 'no-hash'] as const) {
      const wallet = await fundedWallet(t, 5_000_000n);
      const { send } = await signedBuy(wallet);
      facilitator.mode = mode;
      const first = await send();
      expect(first.statusCode, mode).toBe(200);
      // The transaction recorded (and granted) is the chain's hash, never the facilitator's placeholder.
      expect(first.json().transaction, mode).toMatch(/^0x[0-9a-f]{64}$/);
      expect(await t.rail.devnet!.balanceOf(wallet.address)).toBe(3_000_000n);
      facilitator.mode = 'ok';
      expect((await send()).json().code).toBe('replay');
    }
    expect(await purchaseCount()).toBe(3);
  });

  it('the reconciler settles a payment its buyer never retried, and fails one that expired unsettled', async () => {
    const wallet = await fundedWallet(t, 5_000_000n);
    const { send } = await signedBuy(wallet);
    facilitator.mode = 'fail';
    expect((await send()).json().code).toBe('settlement_pending');
    facilitator.mode = 'ok';
    t.clock.advance(60_000);
    expect(await reconcilePayments(t.ctx)).toEqual({ settled: 1, failed: 0, pending: 0 });
    expect(await purchaseCount()).toBe(1);
    expect(await t.rail.devnet!.balanceOf(wallet.address)).toBe(3_000_000n);

    const other = await fundedWallet(t, 5_000_000n);
    const second = await signedBuy(other);
    facilitator.mode = 'fail';
    expect((await second.send()).json().code).toBe('settlement_pending');
    t.clock.advance(10 * 60_000);
    expect(await reconcilePayments(t.ctx)).toEqual({ settled: 0, failed: 1, pending: 0 });
    const [row] = await t.ctx.database.db
      .select()
      .from(payments)
      .where(eq(payments.payer, other.address.toLowerCase()));
    expect(row).toMatchObject({ state: 'failed', errorReason: 'expired_unsettled' });
    expect(await t.rail.devnet!.balanceOf(other.address)).toBe(5_000_000n);
    expect(await purchaseCount()).toBe(1);
  });
});
