import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ledgerEntries, payoutSweeps } from '../../src/db/schema/index.js';
import { sweepPayouts } from '../../src/payments/payouts.js';
import { creatorBalances, ledgerTotals } from '../../src/payments/store.js';
import { newWallet, signedChallenge } from '../identity/support.js';
import { BACKENDS } from '../support/db.js';
import { buy, createPaymentsApp, fundedWallet, type PaymentsTestApp, publishListing } from './support.js';

describe.each(BACKENDS)('ledger and payouts on %s', (backend) => {
  let t: PaymentsTestApp;
  beforeEach(async () => {
    t = await createPaymentsApp({ backend, env: { PLATFORM_FEE_BPS: '250' } });
  });
  afterEach(async () => {
    await t.close();
  });

  it('credits each settled purchase net of the fee; sweeps pay the address in force; balance = credits − sweeps', async () => {
    const fixture = await publishListing(t, { priceMicro: 2_000_000n });
    const db = t.ctx.database.db;
    for (let i = 0; i < 3; i += 1)
      expect((await buy(t, fixture, await fundedWallet(t, 2_000_000n))).statusCode).toBe(200);
    const credits = await db.select().from(ledgerEntries);
    expect(credits.map((entry) => [entry.kind, entry.amountMicro, entry.feeMicro])).toEqual([
      ['credit', 1_950_000n, 50_000n],
      ['credit', 1_950_000n, 50_000n],
      ['credit', 1_950_000n, 50_000n],
    ]);
    expect(await creatorBalances(db, fixture.creator.id)).toEqual([
      { creatorId: fixture.creator.id, balanceMicro: 5_850_000n },
    ]);

    // A payout change requested now is not in force for 48 hours: the sweep pays the old address.
    const next = newWallet();
    const patch = await t.app.inject({
      method: 'PATCH',
      url: '/api/creators/me',
      headers: { authorization: `Bearer ${fixture.creator.apiKey}` },
      payload: {
        payout_address: next.address,
        step_up: await signedChallenge(t, fixture.creator.wallet, 'step_up', {
          newPayoutAddress: next.address,
        }),
        address_proof: await signedChallenge(t, next, 'address_proof'),
      },
    });
    expect(patch.statusCode, patch.body).toBe(200);
    const platformBefore = await t.rail.devnet!.balanceOf(t.rail.payTo);
    const [first] = await sweepPayouts(t.ctx);
    expect(first).toMatchObject({
      state: 'sent',
      amountMicro: 5_850_000n,
      address: fixture.creator.wallet.address.toLowerCase(),
    });
    expect(await t.rail.devnet!.balanceOf(fixture.creator.wallet.address)).toBe(5_850_000n);
    expect(await t.rail.devnet!.balanceOf(t.rail.payTo)).toBe(platformBefore - 5_850_000n);
    expect(await sweepPayouts(t.ctx)).toEqual([]);

    expect((await buy(t, fixture, await fundedWallet(t, 2_000_000n))).statusCode).toBe(200);
    t.clock.advance(48 * 3600 * 1000 + 1000);
    const [second] = await sweepPayouts(t.ctx);
    expect(second).toMatchObject({
      state: 'sent',
      address: next.address.toLowerCase(),
      amountMicro: 1_950_000n,
    });
    expect(await t.rail.devnet!.balanceOf(next.address)).toBe(1_950_000n);

    const totals = await ledgerTotals(db, fixture.creator.id);
    const [balance] = await creatorBalances(db, fixture.creator.id);
    expect(totals.credit - totals.sweep + totals.sweep_reversal).toBe(balance!.balanceMicro);
    expect(balance!.balanceMicro).toBe(0n);
    expect((await db.select().from(payoutSweeps)).map((sweep) => sweep.state)).toEqual(['sent', 'sent']);
  });

  it('a payout transfer that fails is reversed in the ledger and retried by the next sweep', async () => {
    const fixture = await publishListing(t, { priceMicro: 1_000_000n });
    expect((await buy(t, fixture, await fundedWallet(t, 1_000_000n))).statusCode).toBe(200);
    const send = t.rail.sendPayout!;
    t.rail.sendPayout = async () => {
      throw new Error('rpc down');
    };
    expect((await sweepPayouts(t.ctx))[0]).toMatchObject({ state: 'failed' });
    const [afterFailure] = await creatorBalances(t.ctx.database.db, fixture.creator.id);
    expect(afterFailure!.balanceMicro).toBe(975_000n);
    t.rail.sendPayout = send;
    expect((await sweepPayouts(t.ctx))[0]).toMatchObject({ state: 'sent', amountMicro: 975_000n });
    expect(await t.rail.devnet!.balanceOf(fixture.creator.wallet.address)).toBe(975_000n);
    const totals = await ledgerTotals(t.ctx.database.db, fixture.creator.id);
    expect(totals).toEqual({ credit: 975_000n, sweep: 1_950_000n, sweep_reversal: 975_000n });
  });
});
