import { HTTPFacilitatorClient } from '@x402/core/http';
import { eq } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { entitlements, ledgerEntries, payments, purchases } from '../../src/db/schema/index.js';
import { devnetFacilitator } from '../../src/devnet/facilitator.js';
import { reconcilePayments } from '../../src/purchases/reconcile.js';
import { recordSettlement } from '../../src/purchases/settlement.js';
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

  it('settle mark, purchase, entitlement and credit are one write: a failing credit leaves none; recorded at once, they are recorded once', async () => {
    const wallet = await fundedWallet(t, 5_000_000n);
    const { send } = await signedBuy(wallet);
    facilitator.mode = 'fail';
    expect((await send()).json().code).toBe('settlement_pending');
    const [row] = await paymentRows();
    const transaction = `0x${'ab'.repeat(32)}`;
    const counts = async () => ({
      purchases: await purchaseCount(),
      entitlements: (await t.ctx.database.db.select().from(entitlements)).length,
      credits: (await t.ctx.database.db.select().from(ledgerEntries)).length,
    });

    // The ledger refuses the credit: the statement that settles fails whole.
    await t.ctx.database.execScript(`
      create function test_refuse_credit() returns trigger language plpgsql as $$
        begin raise exception 'credit refused'; end $$;
      create trigger test_refuse_credit before insert on ledger_entries
        for each row execute function test_refuse_credit();`);
    await expect(recordSettlement(t.ctx, row!, transaction)).rejects.toThrow(/credit refused/);
    expect(await counts()).toEqual({ purchases: 0, entitlements: 0, credits: 0 });
    expect((await paymentRows())[0]).toMatchObject({ state: 'settling', transaction: null });

    await t.ctx.database.execScript('drop trigger test_refuse_credit on ledger_entries');
    const recorded = await Promise.all(
      Array.from({ length: 5 }, () => recordSettlement(t.ctx, row!, transaction)),
    );
    expect(new Set(recorded.map((purchase) => purchase.id)).size).toBe(1);
    expect(recorded[0]).toMatchObject({
      wallet: wallet.address.toLowerCase(),
      version: '1.0.0',
      kind: 'new',
      amountMicro: 2_000_000n,
      allVersions: false,
      paymentId: row!.id,
      transaction,
    });
    expect(await counts()).toEqual({ purchases: 1, entitlements: 1, credits: 1 });
    const [credit] = await t.ctx.database.db.select().from(ledgerEntries);
    expect(credit).toMatchObject({ kind: 'credit', amountMicro: 2_000_000n, purchaseId: recorded[0]!.id });
    expect((await paymentRows())[0]).toMatchObject({ state: 'settled', transaction, leaseUntil: null });
  });
});
