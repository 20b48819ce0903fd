import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newWallet } from '../identity/support.js';
import { createPaymentsApp, type PaymentsTestApp } from '../purchases/support.js';

/** Issue 17 item 16: on the devnet the served documents say it is test money, and where to check it. */
describe('the devnet says it is test money', () => {
  let t: PaymentsTestApp;
  beforeAll(async () => {
    t = await createPaymentsApp();
  });
  afterAll(async () => t?.close());

  it('names the chain and the test token, and serves balances and transactions read-only', async () => {
    const info = await t.app.inject({ url: '/api/devnet' });
    expect(info.statusCode, info.body).toBe(200);
    expect(info.json()).toMatchObject({
      devnet: true,
      chain_id: 8453,
      network: 'eip155:8453',
      token: {
        address: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
        decimals: 6,
        test_token: true,
        eip712_domain: { name: 'USD Coin (repo402 devnet)', version: '2' },
      },
      balance_url: `${t.config.baseUrl}/api/devnet/balance/{address}`,
      faucet_url: `${t.config.baseUrl}/api/devnet/faucet`,
    });

    const wallet = newWallet();
    const hash = await t.rail.devnet!.fund(wallet.address, 2_500_000n);
    const balance = await t.app.inject({ url: `/api/devnet/balance/${wallet.address}` });
    expect(balance.json()).toEqual({ address: wallet.address, balance_micro: '2500000', test_token: true });
    const tx = await t.app.inject({ url: `/api/devnet/tx/${hash}` });
    expect(tx.json()).toMatchObject({ hash, status: 'success', devnet: true });
    const unknown = await t.app.inject({ url: `/api/devnet/tx/0x${'ab'.repeat(32)}` });
    expect(unknown.statusCode).toBe(404);

    const skill = (await t.app.inject({ url: '/.well-known/agent-skills/buy-a-repo/SKILL.md' })).body;
    expect(skill).toContain('## Test money: this server runs the devnet');
    expect(skill).toContain('Chain id `8453`');
    expect(skill).toContain(`${t.config.baseUrl}/api/devnet/balance/<address>`);
    expect(skill).toContain(`${t.config.baseUrl}/api/devnet/tx/<hash>`);
    expect(skill).toContain('repo402 devnet fund <address> <micro-usdc>');
    expect(skill).toContain(`POST ${t.config.baseUrl}/api/devnet/faucet`);
    // The buying guide too: a buyer who follows it learns where test USDC comes from.
    const guide = (await t.app.inject({ url: '/docs/buying' })).body;
    expect(guide).toContain('Test money: this server runs the devnet');
    expect(guide).toContain('repo402 devnet fund &lt;address&gt; &lt;micro-usdc&gt;');
  });
});
