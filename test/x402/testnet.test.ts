import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config.js';
import { devnetFacilitator } from '../../src/devnet/facilitator.js';
import { reconcileSweeps, sweepPayouts } from '../../src/earnings/payouts.js';
import { BASE, BASE_SEPOLIA } from '../../src/platform/networks.js';
import { newWallet } from '../identity/support.js';
import {
  buyUrl,
  createPaymentsApp,
  type PaymentsTestApp,
  publishListing,
  quote,
  signAuthorization,
} from '../purchases/support.js';
import { type BaseStandIn, SEPOLIA_USDC_DOMAIN, startBaseStandIn, startTestChain } from '../support/chain.js';
import { type FaultyFacilitator, startFaultyFacilitator } from '../support/faulty-facilitator.js';

/** Base's network named anywhere (`eip155:8453` not followed by the `2` of Base Sepolia's 84532). */
const BASE_MAINNET_NAMED = /eip155:8453(?!2)|chain id 8453\b|Chain ID: 8453\b/;

/**
 * PAYMENTS_MODE=testnet (staging on Base Sepolia) against stand-ins speaking the same APIs, reached
 * only over HTTP: an EVM with Base Sepolia's chain id and Circle's test USDC at its address under
 * its domain ("USDC", "2") behind BASE_RPC_URL, and the reference facilitator behind
 * FACILITATOR_URL. Nothing here reaches the internet: the real public facilitator is only the
 * configured default (test/config.test.ts).
 */
describe('testnet mode: staging on Base Sepolia', () => {
  const payoutKey = generatePrivateKey();
  const platform = privateKeyToAccount(payoutKey);
  let sepolia: BaseStandIn;
  let facilitator: FaultyFacilitator;
  let t: PaymentsTestApp;
  let url: string;

  beforeAll(async () => {
    sepolia = await startBaseStandIn(BASE_SEPOLIA);
    facilitator = await startFaultyFacilitator(devnetFacilitator(sepolia.chain));
    // The payout address pays its own gas, as on the real testnet (a faucet's Sepolia ETH).
    await sepolia.chain.fundGas(platform.address);
    t = await createPaymentsApp({
      env: {
        PAYMENTS_MODE: 'testnet',
        FACILITATOR_URL: facilitator.url,
        BASE_RPC_URL: sepolia.rpc.url,
        PLATFORM_PAYOUT_ADDRESS: platform.address,
        PAYOUT_PRIVATE_KEY: payoutKey,
      },
    });
    url = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await t?.close();
    await facilitator?.close();
    await sepolia?.close();
  });

  it('sells with the official client for eip155:84532: the 402 names the network and the token, it settles, the sweep pays', async () => {
    expect(t.rail).toMatchObject({ mode: 'testnet', network: BASE_SEPOLIA, payTo: platform.address });
    const fixture = await publishListing(t, { priceMicro: 2_500_000n, slug: 'staged-kit' });
    const required = await quote(t, fixture);
    const expected = {
      scheme: 'exact',
      network: 'eip155:84532',
      asset: BASE_SEPOLIA.usdc,
      payTo: platform.address,
      amount: '2500000',
      extra: SEPOLIA_USDC_DOMAIN,
    };
    expect(required.accepts[0]).toMatchObject(expected);
    const res = await fetch(`${url}${buyUrl(fixture)}`);
    expect(decodePaymentRequiredHeader(res.headers.get('payment-required')!).accepts[0]).toMatchObject(
      expected,
    );

    const buyer = newWallet();
    await sepolia.chain.fund(buyer.address, 2_500_000n);
    // The official client with the scheme registered for Base Sepolia only, as a staging buyer sets it.
    const client = new x402Client()
      .register('eip155:84532', new ExactEvmScheme(buyer))
      .setSpendControls({ maxAmountPerPayment: '$3' } as never);
    const paid = await wrapFetchWithPayment(fetch, client)(`${url}${buyUrl(fixture)}`);
    expect(paid.status, await paid.clone().text()).toBe(200);
    const settlement = decodePaymentResponseHeader(paid.headers.get('payment-response')!);
    expect(settlement).toMatchObject({ success: true, network: 'eip155:84532' });
    expect(facilitator.settled).toBe(1);
    expect(await sepolia.chain.balanceOf(buyer.address)).toBe(0n);
    expect(await sepolia.chain.balanceOf(platform.address)).toBe(2_500_000n);

    // Payouts are signed for chain 84532 and sent through BASE_RPC_URL.
    const [sweep] = await sweepPayouts(t.ctx);
    expect(sweep).toMatchObject({ state: 'sent', amountMicro: 2_500_000n });
    const payout = await sepolia.chain.publicClient.getTransaction({
      hash: sweep!.transaction as `0x${string}`,
    });
    expect(payout.chainId).toBe(BASE_SEPOLIA.chainId);
    expect(await sepolia.chain.balanceOf(fixture.creator.wallet.address)).toBe(2_500_000n);
    expect(await reconcileSweeps(t.ctx)).toEqual([]);
  });

  it('refuses a payment signed for Base mainnet with the spec’s error, and settles nothing', async () => {
    const fixture = await publishListing(t, { priceMicro: 1_000_000n, slug: 'wrong-chain-kit' });
    const required = await quote(t, fixture);
    const buyer = newWallet();
    await sepolia.chain.fund(buyer.address, 1_000_000n);
    const settledBefore = facilitator.settled;
    const send = (signature: string) =>
      t.app.inject({
        url: buyUrl(fixture),
        headers: { 'payment-signature': signature, 'x-quote-id': required.extra.quote_id },
      });

    // The 402's requirement, signed under Base's chain id: not this token's signature here.
    const forBase = await send(await signAuthorization(required, buyer, { chainId: BASE.chainId }));
    expect(forBase.statusCode, forBase.body).toBe(401);
    expect(forBase.json()).toMatchObject({ code: 'invalid_signature' });

    // A Base 402's requirement (network and token), signed for Base: not this listing's 402.
    const baseRequired = {
      ...required,
      accepts: [{ ...required.accepts[0], network: BASE.caip2, asset: BASE.usdc }],
    };
    const forBase402 = await send(await signAuthorization(baseRequired, buyer));
    expect(forBase402.statusCode, forBase402.body).toBe(400);
    expect(forBase402.json()).toMatchObject({
      code: 'authorization_mismatch',
      details: { mismatched: ['network', 'asset'] },
    });

    // Signed for Base Sepolia but naming Base's network: the same.
    const signedHere = JSON.parse(
      Buffer.from(await signAuthorization(required, buyer), 'base64').toString('utf8'),
    );
    signedHere.accepted.network = BASE.caip2;
    const renamed = await send(encodePaymentSignatureHeader(signedHere));
    expect(renamed.statusCode, renamed.body).toBe(400);
    expect(renamed.json()).toMatchObject({
      code: 'authorization_mismatch',
      details: { mismatched: ['network'] },
    });

    expect(facilitator.settled).toBe(settledBefore);
    expect(await sepolia.chain.balanceOf(buyer.address)).toBe(1_000_000n);
  });

  it('names Base Sepolia wherever it tells a buyer where to pay: challenges, SKILL.md, the guide, the terms, MCP, the page', async () => {
    const wallet = newWallet();
    const challenge = await t.app.inject({
      url: `/api/auth/challenge?address=${wallet.address}&purpose=wallet_ownership`,
    });
    expect(challenge.json().message).toContain('Chain ID: 84532');

    for (const path of ['/.well-known/agent-skills/buy-a-repo/SKILL.md', '/docs/buying', '/api/terms']) {
      const res = await t.app.inject({ url: path });
      expect(res.statusCode, path).toBe(200);
      expect(res.body, path).toContain('eip155:84532');
      expect(res.body, path).not.toMatch(BASE_MAINNET_NAMED);
    }
    const skill = (await t.app.inject({ url: '/.well-known/agent-skills/buy-a-repo/SKILL.md' })).body;
    expect(skill).toContain('## Test money: this server runs on Base Sepolia');
    expect(skill).toContain(BASE_SEPOLIA.usdc);
    expect(skill).toContain("schemes: [{ network: 'eip155:84532'");
    // Not the devnet: no devnet routes.
    expect((await t.app.inject({ url: '/api/devnet' })).statusCode).toBe(404);

    const mcp = new Client({ name: 'staging-agent', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${url}/api/mcp`)));
    try {
      const { tools } = await mcp.listTools();
      const purchase = tools.find((tool) => tool.name === 'purchase')!;
      expect(purchase.description).toContain('eip155:84532');
      expect(mcp.getInstructions()).toContain('Base Sepolia (eip155:84532)');
    } finally {
      await mcp.close();
    }

    const fixture = await publishListing(t, { slug: 'page-kit' });
    const page = await t.app.inject({ url: `/${fixture.owner}/${fixture.slug}` });
    expect(page.body).toContain('data-chain-id="84532"');
    expect(page.body).toContain('data-chain-name="Base Sepolia"');
    expect(page.body).not.toMatch(BASE_MAINNET_NAMED);
  });

  it('refuses to open on a Base mainnet endpoint: BASE_RPC_URL must be a Base Sepolia node', async () => {
    const mainnetNode = await startTestChain([]);
    try {
      const error = await createPaymentsApp({
        env: {
          PAYMENTS_MODE: 'testnet',
          FACILITATOR_URL: facilitator.url,
          BASE_RPC_URL: mainnetNode.url,
          PLATFORM_PAYOUT_ADDRESS: platform.address,
        },
      }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).message).toContain(
        'BASE_RPC_URL: its chain id is 8453, but PAYMENTS_MODE=testnet pays on Base Sepolia (chain id 84532)',
      );
    } finally {
      await mainnetNode.close();
    }
  });
});
