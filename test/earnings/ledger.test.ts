import { type Address, erc20Abi, type Hex, parseTransaction } from 'viem';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ledgerEntries, payoutSweeps } from '../../src/db/schema/index.js';
import { reconcileSweeps, sweepPayouts } from '../../src/earnings/payouts.js';
import { creatorBalances, insertSweep, ledgerTotals } from '../../src/earnings/store.js';
import type { PayoutTransfers } from '../../src/x402/payout-transfers.js';
import { newWallet, signedChallenge } from '../identity/support.js';
import {
  buy,
  createPaymentsApp,
  fundedWallet,
  type PaymentsTestApp,
  publishListing,
} from '../purchases/support.js';
import { BACKENDS } from '../support/db.js';

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
      {
        creatorId: fixture.creator.id,
        balanceMicro: 5_850_000n,
        creditedMicro: 5_850_000n,
        sweptMicro: 0n,
      },
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

  /** One purchase at 1 USDC: the creator is owed 0.975 USDC. */
  async function owed() {
    const fixture = await publishListing(t, { priceMicro: 1_000_000n });
    expect((await buy(t, fixture, await fundedWallet(t, 1_000_000n))).statusCode).toBe(200);
    return fixture;
  }
  const chainBalance = (address: Address) => t.rail.devnet!.balanceOf(address);
  const ledgerBalance = async (creatorId: string) =>
    (await creatorBalances(t.ctx.database.db, creatorId))[0]!.balanceMicro;
  /** Replaces one step of the payout rail for a test; the real step stays callable. */
  function intercept<K extends keyof PayoutTransfers>(
    step: K,
    wrap: (real: PayoutTransfers[K]) => PayoutTransfers[K],
  ): () => void {
    const payouts = t.rail.payouts!;
    const real = payouts[step].bind(payouts) as PayoutTransfers[K];
    payouts[step] = wrap(real);
    return () => {
      payouts[step] = real;
    };
  }
  /** A sweep waits a minute for a receipt that cannot come; tests look once. */
  const lookOnce = () => intercept('outcome', (real) => (payout) => real(payout, 0));

  it('a payout the chain refuses before signing is reversed and paid by the next sweep', async () => {
    const fixture = await owed();
    const devnet = t.rail.devnet!;
    // Empty the platform wallet for real: the transfer's gas estimate reverts.
    const elsewhere = newWallet().address;
    const held = await chainBalance(t.rail.payTo);
    await devnet.publicClient.waitForTransactionReceipt({
      hash: await devnet.walletClient.writeContract({
        account: devnet.platform,
        chain: devnet.walletClient.chain,
        address: t.rail.asset,
        abi: erc20Abi,
        functionName: 'transfer',
        args: [elsewhere, held],
      }),
    });
    const [failed] = await sweepPayouts(t.ctx);
    expect(failed).toMatchObject({ state: 'failed', transaction: null });
    expect(await ledgerBalance(fixture.creator.id)).toBe(975_000n);

    await devnet.fund(t.rail.payTo, held);
    expect((await sweepPayouts(t.ctx))[0]).toMatchObject({ state: 'sent', amountMicro: 975_000n });
    expect(await chainBalance(fixture.creator.wallet.address)).toBe(975_000n);
    expect(await ledgerTotals(t.ctx.database.db, fixture.creator.id)).toEqual({
      credit: 975_000n,
      sweep: 1_950_000n,
      sweep_reversal: 975_000n,
    });
  });

  it('a payout whose send goes unanswered but reached the chain is sent, never reversed', async () => {
    const fixture = await owed();
    const restore = intercept('send', (real) => async (raw) => {
      await real(raw);
      throw new Error('socket hang up');
    });
    const [sweep] = await sweepPayouts(t.ctx);
    restore();
    expect(sweep).toMatchObject({ state: 'sent', amountMicro: 975_000n });
    expect(await chainBalance(fixture.creator.wallet.address)).toBe(975_000n);
    expect(await ledgerTotals(t.ctx.database.db, fixture.creator.id)).toMatchObject({ sweep_reversal: 0n });
    expect(await reconcileSweeps(t.ctx)).toEqual([]);
  });

  it('a payout that never reached the chain stays debited; the reconciler sends the same bytes once', async () => {
    const fixture = await owed();
    const restoreSend = intercept('send', () => async () => {
      throw new Error('connection refused');
    });
    const restoreOutcome = lookOnce();
    const [pending] = await sweepPayouts(t.ctx);
    restoreSend();
    restoreOutcome();
    expect(pending).toMatchObject({ state: 'sending', amountMicro: 975_000n });
    expect(pending!.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await chainBalance(fixture.creator.wallet.address)).toBe(0n);
    // Debited while its outcome is open: a second sweep finds nothing to pay.
    expect(await ledgerBalance(fixture.creator.id)).toBe(0n);
    expect(await sweepPayouts(t.ctx)).toEqual([]);

    const [settled] = await reconcileSweeps(t.ctx);
    expect(settled).toMatchObject({ id: pending!.id, state: 'sent', transaction: pending!.transaction });
    expect(await chainBalance(fixture.creator.wallet.address)).toBe(975_000n);
    expect(await reconcileSweeps(t.ctx)).toEqual([]);
    expect(await sweepPayouts(t.ctx)).toEqual([]);
    expect(await chainBalance(fixture.creator.wallet.address)).toBe(975_000n);
    expect(await ledgerTotals(t.ctx.database.db, fixture.creator.id)).toMatchObject({ sweep_reversal: 0n });
  });

  it('a payout whose nonce another transaction took is reversed by the reconciler and paid once', async () => {
    const fixture = await owed();
    const restoreSend = intercept('send', () => async () => {
      throw new Error('connection refused');
    });
    const restoreOutcome = lookOnce();
    const [pending] = await sweepPayouts(t.ctx);
    restoreSend();
    restoreOutcome();
    expect(pending).toMatchObject({ state: 'sending' });
    const devnet = t.rail.devnet!;
    const { nonce } = parseTransaction(pending!.rawTransaction as Hex);
    await devnet.publicClient.waitForTransactionReceipt({
      hash: await devnet.walletClient.sendTransaction({
        account: devnet.platform,
        chain: devnet.walletClient.chain,
        to: devnet.platform.address,
        value: 0n,
        nonce,
      }),
    });

    const [dropped] = await reconcileSweeps(t.ctx);
    expect(dropped).toMatchObject({ id: pending!.id, state: 'failed' });
    expect(dropped!.error).toMatch(/nonce/);
    expect(await ledgerBalance(fixture.creator.id)).toBe(975_000n);
    expect((await sweepPayouts(t.ctx))[0]).toMatchObject({ state: 'sent', amountMicro: 975_000n });
    expect(await chainBalance(fixture.creator.wallet.address)).toBe(975_000n);
  });

  it('a sweep interrupted before its transfer was signed is reversed by the reconciler', async () => {
    const fixture = await owed();
    const db = t.ctx.database.db;
    const interrupted = await db.transaction((tx) =>
      insertSweep(tx, {
        creatorId: fixture.creator.id,
        address: fixture.creator.wallet.address.toLowerCase(),
        amountMicro: 975_000n,
        createdAt: t.clock.now(),
      }),
    );
    expect(await sweepPayouts(t.ctx)).toEqual([]);
    const [reversed] = await reconcileSweeps(t.ctx);
    expect(reversed).toMatchObject({ id: interrupted.id, state: 'failed' });
    expect((await sweepPayouts(t.ctx))[0]).toMatchObject({ state: 'sent', amountMicro: 975_000n });
    expect(await chainBalance(fixture.creator.wallet.address)).toBe(975_000n);
    expect((await db.select().from(payoutSweeps)).map((sweep) => sweep.state).sort()).toEqual([
      'failed',
      'sent',
    ]);
  });
});
