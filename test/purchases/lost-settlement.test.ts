import { randomBytes } from 'node:crypto';
import { decodePaymentSignatureHeader } from '@x402/core/http';
import { generatePrivateKey } from 'viem/accounts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ledgerEntries, payments, purchases } from '../../src/db/schema/index.js';
import { type DevnetChain, startDevnetChain } from '../../src/devnet/chain.js';
import { devnetFacilitator } from '../../src/devnet/facilitator.js';
import { DevUSDC } from '../../src/devnet/generated/contract-artifacts.js';
import { reconcilePayments } from '../../src/purchases/reconcile.js';
import { newWallet } from '../identity/support.js';
import { USDC_DOMAIN } from '../support/chain.js';
import { BACKENDS, openTestDatabase, type TestDatabase } from '../support/db.js';
import { type FaultyFacilitator, startFaultyFacilitator } from '../support/faulty-facilitator.js';
import { type JsonRpcServer, serveJsonRpc } from '../support/json-rpc.js';
import {
  buyUrl,
  createPaymentsApp,
  type ListingFixture,
  type PaymentsTestApp,
  publishListing,
  quote,
  signAuthorization,
  signPayment,
} from './support.js';

/**
 * Mainnet mode (a Base stand-in reached only over HTTP: an EVM behind JSON-RPC and the reference
 * facilitator behind HTTP), with the faults an outside review used to lose paid sales: a settle
 * that lands on chain while its answer is lost, a chain endpoint that is down meanwhile, retries,
 * the reconciler past validBefore. A payment whose outcome is unknown is never concluded without
 * the chain, and the chain's word is checked: a cancelled authorization, or a nonce spent on
 * another transfer, is not a sale.
 */
describe.each(BACKENDS)('settlements whose answer is lost, in mainnet mode on %s', (backend) => {
  let baseDb: TestDatabase;
  let base: DevnetChain;
  let rpc: JsonRpcServer;
  let facilitator: FaultyFacilitator;
  let t: PaymentsTestApp;
  let fixture: ListingFixture;
  let rpcDown = false;

  beforeEach(async () => {
    rpcDown = false;
    baseDb = await openTestDatabase('pglite');
    base = await startDevnetChain({
      db: baseDb.db,
      platformKey: generatePrivateKey(),
      tokenName: USDC_DOMAIN.name,
    });
    rpc = await serveJsonRpc((method, params) => {
      if (rpcDown) throw new Error('upstream unavailable');
      return base.request({ method, params } as never);
    });
    facilitator = await startFaultyFacilitator(devnetFacilitator(base));
    t = await createPaymentsApp({
      backend,
      env: {
        PAYMENTS_MODE: 'mainnet',
        FACILITATOR_URL: facilitator.url,
        BASE_RPC_URL: rpc.url,
        PLATFORM_PAYOUT_ADDRESS: newWallet().address,
        SETTLEMENT_TIMEOUT_MS: '1000',
      },
    });
    fixture = await publishListing(t, { priceMicro: 2_000_000n });
  });
  afterEach(async () => {
    await t.close();
    await facilitator.close();
    await rpc.close();
    await baseDb.close();
  });

  const db = () => t.ctx.database.db;
  const send = (headers: Record<string, string>) => t.app.inject({ url: buyUrl(fixture), headers });

  async function fundedBuyer() {
    const buyer = newWallet();
    await base.fund(buyer.address, 5_000_000n);
    const required = await quote(t, fixture);
    const headers = {
      'payment-signature': await signPayment(required, buyer),
      'x-quote-id': required.extra.quote_id as string,
    };
    return { buyer, required, headers };
  }

  it('a settle that lands while its answer is lost and the chain is unreadable: pending, never a bare replay or a failure; granted once the chain answers', async () => {
    const { buyer, headers } = await fundedBuyer();
    facilitator.mode = 'lost';
    rpcDown = true;
    const first = await send(headers);
    expect(first.statusCode, first.body).toBe(402);
    expect(first.json().code).toBe('settlement_pending');
    expect(await base.balanceOf(buyer.address)).toBe(3_000_000n);

    // The retry: the facilitator now says the nonce is used, and the chain still cannot be read.
    facilitator.mode = 'ok';
    const retried = await send(headers);
    expect(retried.statusCode, retried.body).toBe(402);
    expect(retried.json().code).toBe('settlement_pending');

    // Past validBefore, the reconciler cannot read the chain either: the payment stays settling.
    t.clock.advance(15 * 60_000);
    await reconcilePayments(t.ctx);
    expect((await db().select().from(payments))[0]).toMatchObject({ state: 'settling' });
    expect(await db().select().from(purchases)).toHaveLength(0);

    // Presented again once the chain answers: the transfer is there, so it is the buyer's.
    rpcDown = false;
    const granted = await send(headers);
    expect(granted.statusCode, granted.body).toBe(200);
    const [purchase] = await db().select().from(purchases);
    expect(granted.json()).toMatchObject({ kind: 'new', purchase_id: purchase!.id });
    const receipt = await base.publicClient.getTransactionReceipt({
      hash: purchase!.transaction as `0x${string}`,
    });
    expect(receipt.status).toBe('success');
    const replay = await send(headers);
    expect(replay.statusCode).toBe(409);
    expect(replay.json().details.purchase.purchase_id).toBe(purchase!.id);
    expect(await db().select().from(ledgerEntries)).toHaveLength(1);
    expect(await base.balanceOf(buyer.address)).toBe(3_000_000n);
  });

  it('the reconciler records a sale whose answer was lost and whose buyer never came back', async () => {
    const { headers } = await fundedBuyer();
    facilitator.mode = 'lost';
    rpcDown = true;
    expect((await send(headers)).json().code).toBe('settlement_pending');
    rpcDown = false;
    t.clock.advance(15 * 60_000);
    expect(await reconcilePayments(t.ctx)).toEqual({ settled: 1, failed: 0, pending: 0 });
    const [purchase] = await db().select().from(purchases);
    expect(purchase!.transaction).toMatch(/^0x[0-9a-f]{64}$/);
  });

  it('a late settle past the timeout whose answer never comes: 504, then the retry is granted from the chain', async () => {
    const { buyer, headers } = await fundedBuyer();
    facilitator.mode = 'lost';
    facilitator.delayMs = 1500;
    rpcDown = true;
    const timedOut = await send(headers);
    expect(timedOut.statusCode, timedOut.body).toBe(504);
    await new Promise((resolve) => setTimeout(resolve, 2500));
    rpcDown = false;
    facilitator.mode = 'ok';
    let answer = await send(headers);
    for (let i = 0; i < 20 && answer.statusCode === 402; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      answer = await send(headers);
    }
    expect(answer.statusCode, answer.body).toBe(200);
    expect(await db().select().from(purchases)).toHaveLength(1);
    expect(await base.balanceOf(buyer.address)).toBe(3_000_000n);
  });

  it('an authorization its payer cancelled on chain after a failed settle is never granted', async () => {
    const { buyer, headers } = await fundedBuyer();
    facilitator.mode = 'fail';
    expect((await send(headers)).json().code).toBe('settlement_pending');
    const { nonce } = (
      decodePaymentSignatureHeader(headers['payment-signature']).payload as {
        authorization: { nonce: `0x${string}` };
      }
    ).authorization;
    const signature = await buyer.signTypedData({
      domain: { name: 'USD Coin', version: '2', chainId: 8453, verifyingContract: base.asset },
      types: {
        CancelAuthorization: [
          { name: 'authorizer', type: 'address' },
          { name: 'nonce', type: 'bytes32' },
        ],
      },
      primaryType: 'CancelAuthorization',
      message: { authorizer: buyer.address, nonce },
    });
    await mined(
      await base.walletClient.writeContract({
        account: base.platform,
        chain: base.publicClient.chain,
        address: base.asset,
        abi: DevUSDC.abi,
        functionName: 'cancelAuthorization',
        args: [buyer.address, nonce, signature],
      }),
    );

    facilitator.mode = 'ok';
    const retried = await send(headers);
    expect(retried.statusCode, retried.body).toBe(400);
    expect(retried.json()).toMatchObject({
      code: 'authorization_mismatch',
      details: { reason: 'authorization_canceled' },
    });
    expect(await db().select().from(purchases)).toHaveLength(0);
    expect(await base.balanceOf(buyer.address)).toBe(5_000_000n);
    t.clock.advance(60_000);
    await reconcilePayments(t.ctx);
    expect(await db().select().from(purchases)).toHaveLength(0);
  });

  it('a nonce its payer spent on another transfer is not a sale', async () => {
    const buyer = newWallet();
    await base.fund(buyer.address, 5_000_000n);
    const required = await quote(t, fixture);
    const nonce = `0x${randomBytes(32).toString('hex')}` as const;
    const ours = await signAuthorization(required, buyer, { nonce });
    facilitator.mode = 'fail';
    const headers = { 'payment-signature': ours, 'x-quote-id': required.extra.quote_id as string };
    expect((await send(headers)).json().code).toBe('settlement_pending');

    // The payer spends the same nonce on a 1-micro transfer to itself: the token marks it used.
    const elsewhere = decodePaymentSignatureHeader(
      await signAuthorization(required, buyer, { nonce, value: 1n, to: buyer.address }),
    ).payload as {
      signature: `0x${string}`;
      authorization: { validAfter: string; validBefore: string };
    };
    await mined(
      await base.walletClient.writeContract({
        account: base.platform,
        chain: base.publicClient.chain,
        address: base.asset,
        abi: DevUSDC.abi,
        functionName: 'transferWithAuthorization',
        args: [
          buyer.address,
          buyer.address,
          1n,
          BigInt(elsewhere.authorization.validAfter),
          BigInt(elsewhere.authorization.validBefore),
          nonce,
          elsewhere.signature,
        ],
      }),
    );

    facilitator.mode = 'ok';
    const retried = await send(headers);
    expect(retried.statusCode, retried.body).toBe(400);
    expect(retried.json()).toMatchObject({
      code: 'authorization_mismatch',
      details: { reason: 'authorization_used_elsewhere' },
    });
    expect(await db().select().from(purchases)).toHaveLength(0);
  });

  async function mined(hash: `0x${string}`) {
    const receipt = await base.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 10 });
    expect(receipt.status).toBe('success');
  }
});
