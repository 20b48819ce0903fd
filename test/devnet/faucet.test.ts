import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devnetFaucetGrants } from '../../src/db/schema/index.js';
import { FAUCET_GRANTS_PER_ADDRESS } from '../../src/devnet/faucet.js';
import { expectError, freshIp, newWallet } from '../identity/support.js';
import { createPaymentsApp, type PaymentsTestApp } from '../purchases/support.js';
import { BACKENDS } from '../support/db.js';

/** Issue 38: a person on a devnet server gets test USDC from the page, capped per address and per day. */
describe.each(BACKENDS)('the devnet faucet on %s', (backend) => {
  let t: PaymentsTestApp;
  beforeAll(async () => {
    t = await createPaymentsApp({ backend });
  });
  afterAll(async () => t?.close());

  const claim = (address: string, remoteAddress = freshIp()) =>
    t.app.inject({ method: 'POST', url: '/api/devnet/faucet', remoteAddress, payload: { address } });

  it('grants 10 test USDC, on chain, and says it is test money', async () => {
    const wallet = newWallet();
    const res = await claim(wallet.address);
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ address: wallet.address, amount_micro: '10000000', test_token: true });
    expect(await t.rail.devnet!.balanceOf(wallet.address)).toBe(10_000_000n);
    const tx = await t.app.inject({ url: `/api/devnet/tx/${res.json().transaction}` });
    expect(tx.json()).toMatchObject({ status: 'success', devnet: true });
  });

  it('caps an address per 24 hours, even when the claims race, and says when to come back', async () => {
    const wallet = newWallet();
    const answers = await Promise.all(
      Array.from({ length: FAUCET_GRANTS_PER_ADDRESS + 3 }, () => claim(wallet.address)),
    );
    expect(answers.filter((res) => res.statusCode === 201)).toHaveLength(FAUCET_GRANTS_PER_ADDRESS);
    const refused = answers.filter((res) => res.statusCode !== 201);
    for (const res of refused) {
      expectError(res, 429, 'rate_limited');
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(23 * 3600);
    }
    expect(await t.rail.devnet!.balanceOf(wallet.address)).toBe(
      BigInt(FAUCET_GRANTS_PER_ADDRESS) * 10_000_000n,
    );
    // The same address in another case is the same address.
    expectError(await claim(wallet.address.toLowerCase()), 429, 'rate_limited');
    t.clock.advance(24 * 3600_000 + 1000);
    expect((await claim(wallet.address)).statusCode).toBe(201);
  });

  it('refuses what is not an address, and an unknown field, writing nothing', async () => {
    const before = (await t.ctx.database.db.select().from(devnetFaucetGrants)).length;
    for (const payload of [{ address: '0x123' }, { address: newWallet().address, amount: '1' }, {}]) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/devnet/faucet',
        remoteAddress: freshIp(),
        payload,
      });
      expectError(res, 400, 'invalid_request');
    }
    expect(await t.ctx.database.db.select().from(devnetFaucetGrants)).toHaveLength(before);
  });
});
