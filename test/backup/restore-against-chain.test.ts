import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import { eq } from 'drizzle-orm';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reconcileAtStart } from '../../src/backup/after-restore.js';
import { connectDatabase, fromPglite } from '../../src/db/connect.js';
import { PGLITE_OPTIONS } from '../../src/db/pglite-memory.js';
import {
  chainCheckpoint,
  entitlements,
  ledgerEntries,
  payoutSweeps,
  purchases,
} from '../../src/db/schema/index.js';
import type { DevnetChain } from '../../src/devnet/chain.js';
import { devnetFacilitator } from '../../src/devnet/facilitator.js';
import { reconcileIfChainAhead, recoverFromChain } from '../../src/earnings/chain-recovery.js';
import { sweepPayouts } from '../../src/earnings/payouts.js';
import { creatorBalances } from '../../src/earnings/store.js';
import { resolveTransferOut, unresolvedTransfersOut } from '../../src/earnings/transfers-out.js';
import { operations } from '../../src/operations.js';
import { bearer, newWallet, signedChallenge, walletSignatureHeader } from '../identity/support.js';
import { buy, createPaymentsApp, type PaymentsTestApp, publishListing } from '../purchases/support.js';
import { type BaseStandIn, startBaseStandIn } from '../support/chain.js';
import { adminQuery, BACKENDS, type TestDatabase } from '../support/db.js';
import { type FaultyFacilitator, startFaultyFacilitator } from '../support/faulty-facilitator.js';

const exec = promisify(execFile);

/**
 * A database restored from a backup taken before a sale and a payout, in mainnet mode against a
 * Base stand-in reached over HTTP (its own EVM behind JSON-RPC, the reference facilitator): the
 * chain still shows both, and the reconciliation records the sale (granted, credited) and the
 * payout (sent, debited), so the next sweep pays nothing twice.
 */
describe.each(BACKENDS)('restore against the chain on %s', (backend) => {
  const payoutKey = generatePrivateKey();
  const platform = privateKeyToAccount(payoutKey);
  let standIn: BaseStandIn;
  let base: DevnetChain;
  let facilitator: FaultyFacilitator;
  let t: PaymentsTestApp | undefined;
  let restored: PaymentsTestApp | undefined;
  let scratch: string;

  const mainnetEnv = () => ({
    PAYMENTS_MODE: 'mainnet',
    FACILITATOR_URL: facilitator.url,
    BASE_RPC_URL: standIn.rpc.url,
    PLATFORM_PAYOUT_ADDRESS: platform.address,
    PAYOUT_PRIVATE_KEY: payoutKey,
  });

  beforeEach(async () => {
    scratch = await mkdtemp(path.join(os.tmpdir(), 'repo402-chain-restore-'));
    standIn = await startBaseStandIn();
    base = standIn.chain;
    await base.request({
      method: 'hardhat_setBalance',
      params: [platform.address, '0xde0b6b3a7640000'],
    } as never);
    facilitator = await startFaultyFacilitator(devnetFacilitator(base));
  });
  afterEach(async () => {
    await t?.close();
    await restored?.close();
    t = restored = undefined;
    await facilitator.close();
    await standIn.close();
    await rm(scratch, { recursive: true, force: true });
  });

  /** The database as a backup holds it: PGlite's own dump, or pg_dump's. */
  async function backUp(app: PaymentsTestApp): Promise<() => Promise<TestDatabase>> {
    if (backend === 'pglite') {
      const dump = await app.database.dumpEmbedded!();
      return async () => {
        const client = new PGlite({ loadDataDir: dump, ...PGLITE_OPTIONS });
        await client.waitReady;
        return fromPglite(client);
      };
    }
    const file = path.join(scratch, 'db.dump');
    await exec('pg_dump', ['--format=custom', `--file=${file}`, app.database.url!]);
    return async () => {
      const adminUrl = process.env.TEST_DATABASE_URL!;
      const name = `repo402_restored_${randomBytes(6).toString('hex')}`;
      await adminQuery(adminUrl, `create database ${name}`);
      const url = new URL(adminUrl);
      url.pathname = `/${name}`;
      await exec('pg_restore', ['--no-owner', `--dbname=${url}`, file]);
      const database = await connectDatabase({ kind: 'postgres', url: url.toString(), poolSize: 5 });
      return {
        ...database,
        url: url.toString(),
        async close() {
          await database.close();
          await adminQuery(adminUrl, `drop database if exists ${name} with (force)`);
        },
      };
    };
  }

  it('finds the later sale granted and credited from the chain, the payout not paid again, and a sale it cannot attribute left alone', async () => {
    t = await createPaymentsApp({ backend, env: mainnetEnv() });
    const fixture = await publishListing(t, { priceMicro: 2_000_000n });
    const early = newWallet();
    await base.fund(early.address, 2_000_000n);
    expect((await buy(t, fixture, early)).statusCode).toBe(200);

    const other = await publishListing(t, { priceMicro: 3_000_000n, slug: 'notes-kit' });

    const restore = await backUp(t);
    const backupBlock = await t.rail.reader.getBlock({ blockTag: 'latest' });

    const late = newWallet();
    await base.fund(late.address, 2_000_000n);
    const paid = await buy(t, fixture, late);
    expect(paid.statusCode, paid.body).toBe(200);
    const [sweep] = await sweepPayouts(t.ctx);
    expect(sweep).toMatchObject({ state: 'sent', amountMicro: 4_000_000n });
    const creatorPayout = sweep!.address as `0x${string}`;
    expect(await base.balanceOf(creatorPayout)).toBe(4_000_000n);
    // After the sweep, another creator raises a price and sells at it: a sale the restored
    // database (which knows the old price) cannot tie to a listing.
    const raised = await t.app.inject({
      method: 'PATCH',
      url: `/api/listings/${other.listingId}`,
      headers: bearer(other.creator.apiKey),
      payload: { price_micro: '3500000' },
    });
    expect(raised.statusCode, raised.body).toBe(200);
    const unmatched = newWallet();
    await base.fund(unmatched.address, 3_500_000n);
    expect((await buy(t, other, unmatched)).statusCode).toBe(200);
    const refunded = newWallet();
    await base.fund(refunded.address, 3_500_000n);
    const refundedBuy = await buy(t, other, refunded);
    expect(refundedBuy.statusCode).toBe(200);
    await t.close();
    t = undefined;

    restored = await createPaymentsApp({ backend, env: mainnetEnv(), database: await restore() });
    const db = restored.ctx.database.db;
    // The restored database knows the first sale only, and would pay its 2.00 out again.
    expect((await creatorBalances(db, fixture.creator.id)).map((b) => b.balanceMicro)).toEqual([2_000_000n]);
    expect(
      await db.select().from(entitlements).where(eq(entitlements.wallet, late.address.toLowerCase())),
    ).toEqual([]);

    // USDC sent to the platform without an authorization (a top-up, say) is no sale.
    await base.fund(platform.address, 1_000_000n);
    const since = new Date(Number(backupBlock.timestamp) * 1000 - 60_000);
    const result = await recoverFromChain(restored.ctx, since);
    expect(result.sales).toEqual({ known: 1, recovered: 1, unattributed: 2, not_sales: 1 });
    expect(result.payouts).toEqual({ known: 0, recovered: 1, unresolved: 0 });
    expect(result.open).toEqual({ transfers_out: 0, sales: 2 });

    // The later buyer holds the version and the purchase names the transaction the chain showed.
    const [purchase] = await db
      .select()
      .from(purchases)
      .where(eq(purchases.wallet, late.address.toLowerCase()));
    expect(purchase).toMatchObject({
      version: JSON.parse(paid.body).version,
      kind: 'new',
      amountMicro: 2_000_000n,
    });
    expect(purchase!.transaction).toBe(JSON.parse(paid.body).transaction);
    expect(
      await db.select().from(entitlements).where(eq(entitlements.wallet, late.address.toLowerCase())),
    ).toHaveLength(1);
    // Credited 4.00, swept 4.00: nothing left to pay, and the sweep pays nothing.
    expect((await creatorBalances(db, fixture.creator.id)).map((b) => b.balanceMicro)).toEqual([0n]);
    const sweeps = await db.select().from(payoutSweeps);
    expect(sweeps).toMatchObject([
      { state: 'sent', amountMicro: 4_000_000n, transaction: sweep!.transaction },
    ]);
    expect(await sweepPayouts(restored.ctx)).toEqual([]);
    expect(await base.balanceOf(creatorPayout)).toBe(4_000_000n);

    // The sale it could not attribute is granted to nobody and credited to nobody: never guessed.
    expect(
      await db.select().from(entitlements).where(eq(entitlements.wallet, unmatched.address.toLowerCase())),
    ).toEqual([]);
    expect((await creatorBalances(db, other.creator.id)).map((b) => b.balanceMicro)).toEqual([]);

    // The holder's re-fetch is free on the restored server.
    const refetch = await restored.app.inject({
      url: `/api/r/${fixture.owner}/${fixture.slug}/v/${JSON.parse(paid.body).version}`,
      headers: { 'x-wallet-signature': await walletSignatureHeader(restored, late) },
    });
    expect(refetch.statusCode, refetch.body).toBe(200);

    // Again: nothing new.
    const again = await recoverFromChain(restored.ctx, since);
    expect(again.sales).toEqual({ known: 2, recovered: 0, unattributed: 2, not_sales: 1 });
    expect(again.payouts).toEqual({ known: 1, recovered: 0, unresolved: 0 });
    expect(await db.select().from(purchases)).toHaveLength(2);

    // The operator sees both (repo402 sales unattributed), grants one and records the other's refund.
    const run = <N extends keyof typeof operations>(name: N, args: unknown) =>
      operations[name].run(restored!.ctx, operations[name].args.parse(args) as never);
    const open = (await run('sales.unattributed', {})) as {
      transaction: string;
      payer: string;
      amount_micro: string;
    }[];
    expect(open.map(({ payer, amount_micro }) => ({ payer, amount_micro }))).toEqual([
      { payer: unmatched.address.toLowerCase(), amount_micro: '3500000' },
      { payer: refunded.address.toLowerCase(), amount_micro: '3500000' },
    ]);
    const [toGrant, toRefund] = open as [(typeof open)[number], (typeof open)[number]];
    await expect(
      run('sales.grant', { transaction: toGrant.transaction, owner: other.owner, slug: 'no-such-listing' }),
    ).rejects.toThrow(/no listing/);
    const granted = await run('sales.grant', {
      transaction: toGrant.transaction,
      owner: other.owner,
      slug: other.slug,
    });
    expect(granted).toMatchObject({ listingId: other.listingId, version: '1.0.0', kind: 'new' });
    expect(
      await db.select().from(entitlements).where(eq(entitlements.wallet, unmatched.address.toLowerCase())),
    ).toHaveLength(1);
    expect((await creatorBalances(db, other.creator.id)).map((b) => b.balanceMicro)).toEqual([3_500_000n]);
    const [grantedPurchase] = await db
      .select()
      .from(purchases)
      .where(eq(purchases.wallet, unmatched.address.toLowerCase()));
    expect(grantedPurchase).toMatchObject({ amountMicro: 3_500_000n, transaction: toGrant.transaction });
    await expect(
      run('sales.grant', { transaction: toGrant.transaction, owner: other.owner, slug: other.slug }),
    ).rejects.toThrow(/already resolved/);
    expect(
      await run('sales.refund', { transaction: toRefund.transaction, note: 'refunded in 0xabc' }),
    ).toMatchObject({
      resolution: 'refunded',
      note: 'refunded in 0xabc',
    });
    expect(
      await db.select().from(entitlements).where(eq(entitlements.wallet, refunded.address.toLowerCase())),
    ).toEqual([]);
    expect(await run('sales.unattributed', {})).toEqual([]);
    // Resolved sales are known to the next reconciliation.
    const third = await recoverFromChain(restored.ctx, since);
    expect(third.sales).toEqual({ known: 4, recovered: 0, unattributed: 0, not_sales: 1 });
    expect(third.open).toEqual({ transfers_out: 0, sales: 0 });
  }, 120_000);

  it('holds the sweep on a transfer out it cannot attribute (a payout address changed after the backup) until the operator resolves it, so nothing is paid twice', async () => {
    t = await createPaymentsApp({ backend, env: mainnetEnv() });
    const fixture = await publishListing(t, { priceMicro: 2_000_000n });
    const buyer = newWallet();
    await base.fund(buyer.address, 2_000_000n);
    expect((await buy(t, fixture, buyer)).statusCode).toBe(200);
    const restore = await backUp(t);
    const backupBlock = await t.rail.reader.getBlock({ blockTag: 'latest' });

    // After the backup the creator moves its payout address; once in force, the sweep pays there.
    const next = newWallet();
    const patch = await t.app.inject({
      method: 'PATCH',
      url: '/api/creators/me',
      headers: bearer(fixture.creator.apiKey),
      payload: {
        payout_address: next.address,
        step_up: await signedChallenge(t, fixture.creator.wallet, 'step_up', {
          newPayoutAddress: next.address,
        }),
        address_proof: await signedChallenge(t, next, 'address_proof'),
      },
    });
    expect(patch.statusCode, patch.body).toBe(200);
    t.clock.advance(48 * 3600 * 1000 + 1000);
    const [sweep] = await sweepPayouts(t.ctx);
    expect(sweep).toMatchObject({
      state: 'sent',
      amountMicro: 2_000_000n,
      address: next.address.toLowerCase(),
    });
    expect(await base.balanceOf(next.address)).toBe(2_000_000n);
    await t.close();
    t = undefined;

    // The restored database knows neither the new address nor the sweep: 2.00 owed to the old one.
    restored = await createPaymentsApp({ backend, env: mainnetEnv(), database: await restore() });
    const db = restored.ctx.database.db;
    const owed = async () => (await creatorBalances(db, fixture.creator.id)).map((b) => b.balanceMicro);
    expect(await owed()).toEqual([2_000_000n]);
    const since = new Date(Number(backupBlock.timestamp) * 1000 - 60_000);
    const result = await recoverFromChain(restored.ctx, since);
    expect(result.payouts).toEqual({ known: 0, recovered: 0, unresolved: 1 });
    expect(result.open).toEqual({ transfers_out: 1, sales: 0 });
    const [held] = await unresolvedTransfersOut(restored.ctx);
    expect(held).toMatchObject({
      transaction: sweep!.transaction,
      toAddress: next.address.toLowerCase(),
      amountMicro: 2_000_000n,
      resolution: null,
    });

    // The sweep sends nothing while it is unresolved: the old address is not paid the 2.00 again.
    const old = fixture.creator.wallet.address;
    const oldBefore = await base.balanceOf(old);
    expect(await sweepPayouts(restored.ctx)).toEqual([]);
    expect(await base.balanceOf(old)).toBe(oldBefore);
    expect(await db.select().from(payoutSweeps)).toEqual([]);
    // Found again: still one row, still held.
    expect((await recoverFromChain(restored.ctx, since)).payouts).toEqual({
      known: 0,
      recovered: 0,
      unresolved: 1,
    });

    // The operator says it was this creator's payout: debited, the hold lifts, nothing is owed.
    const resolved = await resolveTransferOut(restored.ctx, sweep!.transaction!, { creator: fixture.owner });
    expect(resolved).toMatchObject({ resolution: 'payout', creatorId: fixture.creator.id });
    expect(await owed()).toEqual([0n]);
    expect(await db.select().from(ledgerEntries).where(eq(ledgerEntries.kind, 'sweep'))).toMatchObject([
      { creatorId: fixture.creator.id, amountMicro: 2_000_000n },
    ]);
    expect(await sweepPayouts(restored.ctx)).toEqual([]);
    expect(await base.balanceOf(old)).toBe(oldBefore);
    await expect(
      resolveTransferOut(restored.ctx, sweep!.transaction!, { notAPayout: 'again' }),
    ).rejects.toThrow(/already resolved/);
    expect((await recoverFromChain(restored.ctx, since)).payouts).toEqual({
      known: 1,
      recovered: 0,
      unresolved: 0,
    });
  }, 120_000);

  it('at the start of a worker on a database restored without restored-from.json (pg_restore), finds the chain ahead and reconciles before any job', async () => {
    t = await createPaymentsApp({ backend, env: mainnetEnv() });
    const fixture = await publishListing(t, { priceMicro: 2_000_000n });
    const early = newWallet();
    await base.fund(early.address, 2_000_000n);
    expect((await buy(t, fixture, early)).statusCode).toBe(200);
    const restore = await backUp(t);
    const late = newWallet();
    await base.fund(late.address, 2_000_000n);
    expect((await buy(t, fixture, late)).statusCode).toBe(200);
    const [sweep] = await sweepPayouts(t.ctx);
    expect(sweep).toMatchObject({ state: 'sent', amountMicro: 4_000_000n });
    await t.close();
    t = undefined;

    // A process that runs jobs (no job here, so nothing else moves) starts on the restored database.
    restored = await createPaymentsApp({ backend, env: mainnetEnv(), database: await restore(), jobs: [] });
    const db = restored.ctx.database.db;
    expect(
      await db.select().from(entitlements).where(eq(entitlements.wallet, late.address.toLowerCase())),
    ).toHaveLength(1);
    expect((await creatorBalances(db, fixture.creator.id)).map((b) => b.balanceMicro)).toEqual([0n]);
    expect(await db.select().from(payoutSweeps)).toMatchObject([{ transaction: sweep!.transaction }]);
    expect(await sweepPayouts(restored.ctx)).toEqual([]);
    const [checkpoint] = await db.select().from(chainCheckpoint);
    expect(checkpoint!.block).toBe((await restored.rail.reader.getBlock({ blockTag: 'latest' })).number);

    // The next start finds the chain in step: nothing to reconcile, the checkpoint moves on.
    await base.fund(early.address, 1n);
    expect(await reconcileIfChainAhead(restored.ctx)).toBeUndefined();
    const [moved] = await db.select().from(chainCheckpoint);
    expect(moved!.block).toBe((await restored.rail.reader.getBlock({ blockTag: 'latest' })).number);
    // USDC sent to the platform by anyone is no sale, but the database does not know it: reconciled.
    await base.fund(platform.address, 1_000_000n);
    expect((await reconcileIfChainAhead(restored.ctx))?.sales).toEqual({
      known: 2,
      recovered: 0,
      unattributed: 0,
      not_sales: 1,
    });

    // A chain that cannot be read stops the start, as on a DATA_DIR restored by repo402 restore.
    await standIn.rpc.close();
    await expect(reconcileAtStart(restored.ctx)).rejects.toThrow(
      /could not check the database against the chain at start/,
    );
  }, 120_000);

  it('at the start of a new installation on a chain with no history, takes the chain as it is', async () => {
    t = await createPaymentsApp({ backend, env: mainnetEnv(), jobs: [] });
    const [checkpoint] = await t.ctx.database.db.select().from(chainCheckpoint);
    expect(checkpoint!.block).toBe((await t.rail.reader.getBlock({ blockTag: 'latest' })).number);
    expect(await reconcileIfChainAhead(t.ctx)).toBeUndefined();
  }, 60_000);
});
