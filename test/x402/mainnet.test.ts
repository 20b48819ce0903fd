import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config.js';
import type { DevnetChain } from '../../src/devnet/chain.js';
import { devnetFacilitator } from '../../src/devnet/facilitator.js';
import { reconcileSweeps, sweepPayouts } from '../../src/earnings/payouts.js';
import { BASE } from '../../src/platform/networks.js';
import { newWallet } from '../identity/support.js';
import { buy, createPaymentsApp, type PaymentsTestApp, publishListing, quote } from '../purchases/support.js';
import { type BaseStandIn, startBaseStandIn } from '../support/chain.js';
import { BACKENDS } from '../support/db.js';
import { type FaultyFacilitator, startFaultyFacilitator } from '../support/faulty-facilitator.js';

/**
 * PAYMENTS_MODE=mainnet against stand-ins for Base reached only over HTTP, as a deployment reaches
 * them: a real EVM (an EDR chain of its own, with the token at the Base USDC address) behind a
 * JSON-RPC endpoint (BASE_RPC_URL), and the reference facilitator behind HTTP (FACILITATOR_URL).
 * Nothing of this chain is in the app's process except through those two URLs.
 */
describe.each(BACKENDS)('mainnet mode on %s', (backend) => {
  const payoutKey = generatePrivateKey();
  const platform = privateKeyToAccount(payoutKey);
  let standIn: BaseStandIn;
  let base: DevnetChain;
  let facilitator: FaultyFacilitator;
  let t: PaymentsTestApp | undefined;

  const mainnetEnv = () => ({
    PAYMENTS_MODE: 'mainnet',
    FACILITATOR_URL: facilitator.url,
    BASE_RPC_URL: standIn.rpc.url,
    PLATFORM_PAYOUT_ADDRESS: platform.address,
    PAYOUT_PRIVATE_KEY: payoutKey,
  });

  beforeEach(async () => {
    // The facilitator settles with this chain's own key; payouts are signed by the platform key.
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
    t = undefined;
    await facilitator.close();
    await standIn.close();
  });

  it('sells exactly as devnet does, and the sweep pays the creator from the platform address', async () => {
    t = await createPaymentsApp({ backend, env: mainnetEnv() });
    expect(t.rail).toMatchObject({ mode: 'mainnet', payTo: platform.address });
    expect(t.rail.devnet).toBeUndefined();
    const fixture = await publishListing(t, { priceMicro: 2_000_000n });
    const required = await quote(t, fixture);
    expect(required.accepts[0]).toMatchObject({
      network: BASE.caip2,
      asset: BASE.usdc,
      payTo: platform.address,
      amount: '2000000',
      extra: { name: 'USD Coin', version: '2' },
    });

    const buyer = newWallet();
    await base.fund(buyer.address, 2_000_000n);
    const paid = await buy(t, fixture, buyer);
    expect(paid.statusCode, paid.body).toBe(200);
    expect(facilitator.settled).toBe(1);
    expect(await base.balanceOf(buyer.address)).toBe(0n);
    expect(await base.balanceOf(platform.address)).toBe(2_000_000n);

    const [sweep] = await sweepPayouts(t.ctx);
    expect(sweep).toMatchObject({
      state: 'sent',
      amountMicro: 2_000_000n,
      address: fixture.creator.wallet.address.toLowerCase(),
    });
    const receipt = await base.publicClient.getTransactionReceipt({
      hash: sweep!.transaction as `0x${string}`,
    });
    expect(receipt).toMatchObject({ status: 'success', from: platform.address.toLowerCase() });
    expect(await base.balanceOf(fixture.creator.wallet.address)).toBe(2_000_000n);
    expect(await base.balanceOf(platform.address)).toBe(0n);
    expect(await reconcileSweeps(t.ctx)).toEqual([]);
    expect(standIn.rpc.calls).toContain('eth_sendRawTransaction');

    // Real money: no devnet routes, and neither the skill nor the buying guide speaks of test money.
    expect((await t.app.inject({ url: '/api/devnet' })).statusCode).toBe(404);
    // No faucet either: there is no test money on mainnet.
    const faucet = await t.app.inject({
      method: 'POST',
      url: '/api/devnet/faucet',
      payload: { address: buyer.address },
    });
    expect(faucet.statusCode).toBe(404);
    for (const url of ['/.well-known/agent-skills/buy-a-repo/SKILL.md', '/docs/buying']) {
      const res = await t.app.inject({ url });
      expect(res.statusCode, url).toBe(200);
      expect(res.body, url).not.toContain('Test money');
    }
  });

  it('without a payout key, buying works and sweeps wait: nothing is debited', async () => {
    const { PAYOUT_PRIVATE_KEY: _omitted, ...env } = mainnetEnv();
    t = await createPaymentsApp({ backend, env });
    expect(t.rail.payouts).toBeUndefined();
    const fixture = await publishListing(t, { priceMicro: 1_000_000n });
    const buyer = newWallet();
    await base.fund(buyer.address, 1_000_000n);
    expect((await buy(t, fixture, buyer)).statusCode).toBe(200);
    expect(await sweepPayouts(t.ctx)).toEqual([]);
    expect(await base.balanceOf(platform.address)).toBe(1_000_000n);
  });

  it("refuses to start with a payout key that is not the platform address's", async () => {
    const error = await createPaymentsApp({
      backend,
      env: { ...mainnetEnv(), PAYOUT_PRIVATE_KEY: generatePrivateKey() },
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toMatch(
      /PAYOUT_PRIVATE_KEY: its address .* is not PLATFORM_PAYOUT_ADDRESS/,
    );
  });
});
