import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { eq } from 'drizzle-orm';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { purchases } from '../../src/db/schema/index.js';
import { formatUsd } from '../../src/platform/money/usd.js';
import { walletSignatureHeader } from '../identity/support.js';
import { codeBlocks } from '../support/code-blocks.js';
import { freePort } from '../support/process.js';
import {
  addRelease,
  createPaymentsApp,
  fundedWallet,
  type PaymentsTestApp,
  publishListing,
} from './support.js';

/**
 * Runs a buying program as a user would, paying with `key`. It is written into the worktree so its
 * imports resolve as in a user's project.
 */
async function runBuyingProgram(program: string, key: string): Promise<void> {
  const dir = await mkdtemp(join(process.cwd(), 'test', 'purchases', '.snippet-'));
  const file = join(dir, 'buy.mts');
  const before = process.env.PRIVATE_KEY;
  process.env.PRIVATE_KEY = key;
  try {
    await writeFile(file, program);
    await import(pathToFileURL(file).href);
  } finally {
    if (before === undefined) delete process.env.PRIVATE_KEY;
    else process.env.PRIVATE_KEY = before;
    await rm(dir, { recursive: true, force: true });
  }
}

/** The program with its spend-limit setting taken out: the client's default limit applies. */
function withoutSpendLimit(program: string): string {
  const setting = '  spendControls: { maxAmountPerPayment: MAX_PER_PAYMENT },\n';
  expect(program).toContain(setting);
  return program.replace(setting, '');
}

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

  it("runs SKILL.md's buying program as served against a listing priced above $1; the 402 names the spend limit", async () => {
    const fixture = await publishListing(t, { priceMicro: 3_500_000n });
    const key = generatePrivateKey();
    const buyer = privateKeyToAccount(key);
    await t.rail.devnet!.fund(buyer.address, 10_000_000n);
    const resource = `${base}/api/r/${fixture.owner}/${fixture.slug}`;

    const unpaid = await fetch(resource);
    expect(unpaid.status).toBe(402);
    expect(((await unpaid.json()) as { extra: { instructions: string } }).extra.instructions).toContain(
      "spendControls: { maxAmountPerPayment: '$3.50' }",
    );

    const skill = await (await fetch(`${base}/.well-known/agent-skills/buy-a-repo/SKILL.md`)).text();
    const program = /```ts\n([\s\S]*?)\n```/
      .exec(skill)![1]!
      .replace('<owner>/<slug>', `${fixture.owner}/${fixture.slug}`);

    // With the client's default limit the program stops before signing anything.
    await expect(runBuyingProgram(withoutSpendLimit(program), key)).rejects.toThrow(
      /spendControls.maxAmountPerPayment/,
    );
    expect(await t.rail.devnet!.balanceOf(buyer.address)).toBe(10_000_000n);
    await runBuyingProgram(program, key);
    expect(await t.rail.devnet!.balanceOf(buyer.address)).toBe(6_500_000n);
    const rows = await t.ctx.database.db
      .select()
      .from(purchases)
      .where(eq(purchases.listingId, fixture.listingId));
    expect(rows.map((row) => [row.wallet, row.version, row.amountMicro])).toEqual([
      [buyer.address.toLowerCase(), '1.0.0', 3_500_000n],
    ]);
  });

  it("runs /docs/buying's program as served at the selling guide's example price; without its spend limit it fails", async () => {
    const selling = codeBlocks(await (await fetch(`${base}/docs/selling`)).text(), 'sh').join('\n');
    const price = BigInt(/"price_micro": "([0-9]+)"/.exec(selling)![1]!);
    expect(price).toBeGreaterThan(1_000_000n);
    const fixture = await publishListing(t, { priceMicro: price });
    const key = generatePrivateKey();
    const buyer = privateKeyToAccount(key);
    await t.rail.devnet!.fund(buyer.address, price);

    const [program] = codeBlocks(await (await fetch(`${base}/docs/buying`)).text(), 'ts');
    // Set up for exactly that price, so the example is the one the selling guide makes.
    expect(program).toContain(`const MAX_PER_PAYMENT = '$${formatUsd(price)}';`);
    const forListing = program!.replace('<owner>/<slug>', `${fixture.owner}/${fixture.slug}`);
    await expect(runBuyingProgram(withoutSpendLimit(forListing), key)).rejects.toThrow(
      /spendControls.maxAmountPerPayment/,
    );
    expect(await t.rail.devnet!.balanceOf(buyer.address)).toBe(price);
    await runBuyingProgram(forListing, key);
    expect(await t.rail.devnet!.balanceOf(buyer.address)).toBe(0n);
  });
});
