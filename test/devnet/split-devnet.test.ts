import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterEach, describe, expect, it } from 'vitest';
import { fundOnDevnet } from '../../src/devnet/fund.js';
import { type DevnetServer, startDevnetServer } from '../../src/devnet/serve.js';
import { reconcileSweeps, sweepPayouts } from '../../src/earnings/payouts.js';
import { newWallet } from '../identity/support.js';
import { buy, createPaymentsApp, type PaymentsTestApp, publishListing } from '../purchases/support.js';
import { freePort } from '../support/process.js';

/**
 * The split topology's devnet (docs/OPERATIONS.md, "A devnet several processes share"): `repo402
 * devnet serve` (its chain as JSON-RPC, the reference facilitator over HTTP) and an API process in
 * mainnet mode that reaches it only through FACILITATOR_URL and BASE_RPC_URL, paying creators from
 * PLATFORM_PAYOUT_ADDRESS with PAYOUT_PRIVATE_KEY. The payout address signs its own transfers, so
 * it needs ether for gas on that chain: `repo402 devnet fund` gives it.
 */
describe('the split devnet', () => {
  let devnet: PaymentsTestApp | undefined;
  let served: DevnetServer | undefined;
  let tier: PaymentsTestApp | undefined;
  afterEach(async () => {
    await tier?.close();
    await served?.close();
    await devnet?.close();
    tier = served = devnet = undefined;
  });

  it('`devnet fund` gives the payout address gas, so the payout sweep pays the creator', async () => {
    devnet = await createPaymentsApp({ env: { HOST: '127.0.0.1', PORT: String(await freePort()) } });
    served = await startDevnetServer(devnet.ctx, devnet.config);
    const payoutKey = generatePrivateKey();
    const payout = privateKeyToAccount(payoutKey);
    tier = await createPaymentsApp({
      env: {
        PAYMENTS_MODE: 'mainnet',
        FACILITATOR_URL: served.facilitatorUrl,
        BASE_RPC_URL: served.rpcUrl,
        PLATFORM_PAYOUT_ADDRESS: payout.address,
        PAYOUT_PRIVATE_KEY: payoutKey,
      },
    });
    const chain = devnet.rail.devnet!;

    // As the operator would (docs/OPERATIONS.md): `repo402 devnet fund <payout address> <micro-usdc>`.
    await fundOnDevnet(devnet.ctx, payout.address, 1n);

    const fixture = await publishListing(tier, { priceMicro: 3_000_000n });
    const buyer = newWallet();
    await fundOnDevnet(devnet.ctx, buyer.address, 3_000_000n);
    const paid = await buy(tier, fixture, buyer);
    expect(paid.statusCode, paid.body).toBe(200);

    const [sweep] = await sweepPayouts(tier.ctx);
    expect(sweep).toMatchObject({ state: 'sent', amountMicro: 3_000_000n });
    expect(await chain.balanceOf(fixture.creator.wallet.address)).toBe(3_000_000n);
    const receipt = await chain.publicClient.getTransactionReceipt({
      hash: sweep!.transaction as `0x${string}`,
    });
    expect(receipt).toMatchObject({ status: 'success', from: payout.address.toLowerCase() });
    expect(await reconcileSweeps(tier.ctx)).toEqual([]);
    // The allowance, less the sweep's gas.
    const left = await chain.publicClient.getBalance({ address: payout.address });
    expect(left < 10n ** 18n && left > 10n ** 17n).toBe(true);
  });

  it('tops gas up only below the allowance: a second fund sends no ether', async () => {
    devnet = await createPaymentsApp();
    const chain = devnet.rail.devnet!;
    const holder = newWallet().address;
    const before = await chain.publicClient.getBlockNumber({ cacheTime: 0 });
    await fundOnDevnet(devnet.ctx, holder, 1_000_000n);
    // A mint and a gas transfer.
    expect(await chain.publicClient.getBlockNumber({ cacheTime: 0 })).toBe(before + 2n);
    await fundOnDevnet(devnet.ctx, holder, 1_000_000n);
    expect(await chain.publicClient.getBlockNumber({ cacheTime: 0 })).toBe(before + 3n);
    expect(await chain.publicClient.getBalance({ address: holder })).toBe(10n ** 18n);
    expect(await chain.balanceOf(holder)).toBe(2_000_000n);
  });
});
