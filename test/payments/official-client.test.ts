import { createHash } from 'node:crypto';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { walletSignatureHeader } from '../identity/support.js';
import { freePort } from '../support/process.js';
import {
  addRelease,
  createPaymentsApp,
  fundedWallet,
  type PaymentsTestApp,
  publishListing,
} from './support.js';

/** The reference buyer: @x402/fetch with @x402/evm's exact client scheme and a viem account, unmodified. */
describe('buying with the official x402 client against the running server on devnet', () => {
  let t: PaymentsTestApp;
  let base: string;
  beforeEach(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await createPaymentsApp({ env: { BASE_URL: base } });
    await t.app.listen({ port, host: '127.0.0.1' });
  });
  afterEach(async () => {
    await t.close();
  });

  it('pays the 402, downloads the zip, checks its SHA-256; balances move by the price', async () => {
    const fixture = await publishListing(t, { priceMicro: 3_500_000n });
    const buyer = await fundedWallet(t, 10_000_000n);
    const platformBefore = await t.rail.devnet!.balanceOf(t.rail.payTo);
    // The only configuration: the price is above the client's default $1 spend cap.
    const client = new x402Client()
      .register('eip155:*', new ExactEvmScheme(buyer))
      .setSpendControls({ maxAmountPerPayment: '$10' } as never);
    const fetchWithPayment = wrapFetchWithPayment(fetch, client);

    const response = await fetchWithPayment(`${base}/api/r/${fixture.owner}/${fixture.slug}`);
    expect(response.status, await response.clone().text()).toBe(200);
    const grant = (await response.json()) as {
      download_url: string;
      artifact_sha256: string;
      transaction: string;
    };
    const settlement = decodePaymentResponseHeader(response.headers.get('payment-response')!);
    expect(settlement).toMatchObject({
      success: true,
      network: 'eip155:8453',
      transaction: grant.transaction,
    });

    const zip = Buffer.from(await (await fetch(grant.download_url)).arrayBuffer());
    expect(createHash('sha256').update(zip).digest('hex')).toBe(grant.artifact_sha256);
    expect(grant.artifact_sha256).toBe(fixture.zips.get('1.0.0')!.sha256);
    expect(await t.rail.devnet!.balanceOf(buyer.address)).toBe(6_500_000n);
    expect(await t.rail.devnet!.balanceOf(t.rail.payTo)).toBe(platformBefore + 3_500_000n);
    const receipt = await t.rail.devnet!.publicClient.getTransactionReceipt({
      hash: grant.transaction as `0x${string}`,
    });
    expect(receipt.status).toBe('success');
  });

  it('a holder buys the update with the official client, naming itself with X-Wallet-Signature', async () => {
    const fixture = await publishListing(t, { priceMicro: 3_500_000n, updatePriceMicro: 700_000n });
    const buyer = await fundedWallet(t, 10_000_000n);
    const client = new x402Client()
      .register('eip155:*', new ExactEvmScheme(buyer))
      .setSpendControls({ maxAmountPerPayment: '$10' } as never);
    const fetchWithPayment = wrapFetchWithPayment(fetch, client);
    const url = `${base}/api/r/${fixture.owner}/${fixture.slug}`;
    expect((await fetchWithPayment(url)).status).toBe(200);
    await addRelease(t, fixture, '1.1.0');

    // The client sends the first request's headers again with the payment: the wallet signature
    // identifies the holder for the 402 and is not needed (nor used up) once the payment is there.
    const response = await fetchWithPayment(url, {
      headers: { 'x-wallet-signature': await walletSignatureHeader(t, buyer) },
    });
    expect(response.status, await response.clone().text()).toBe(200);
    const grant = (await response.json()) as { kind: string; version: string; artifact_sha256: string };
    expect(grant).toMatchObject({ kind: 'update', version: '1.1.0' });
    expect(grant.artifact_sha256).toBe(fixture.zips.get('1.1.0')!.sha256);
    expect(await t.rail.devnet!.balanceOf(buyer.address)).toBe(10_000_000n - 3_500_000n - 700_000n);
  });
});
