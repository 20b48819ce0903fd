import { randomBytes } from 'node:crypto';
import { x402Client } from '@x402/core/client';
import { encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentRequired } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { expect } from 'vitest';
import type { PaymentRail } from '../../src/x402/rail.js';
import { newWallet, type RegisteredCreator, walletSignatureHeader } from '../identity/support.js';
import { createTestApp, type TestApp, type TestAppOptions } from '../support/app.js';
import { addFixtureReleases, type PublishedFixture, publishedListingFixture } from '../support/listings.js';

export interface PaymentsTestApp extends TestApp {
  rail: PaymentRail;
}

/**
 * The real app with its payment rail (by default devnet: EDR chain, token, in-process facilitator)
 * on its own database. The manual clock starts at the real time: the chain and the x402 client use it.
 */
export async function createPaymentsApp(options: TestAppOptions = {}): Promise<PaymentsTestApp> {
  const t = await createTestApp({
    ...options,
    env: { SETTLEMENT_TIMEOUT_MS: '5000', ...options.env },
    openPayments: true,
  });
  t.clock.set(new Date());
  return Object.assign(t, { rail: await t.ctx.rail() });
}

export type ListingFixture = PublishedFixture;

/**
 * TEST FIXTURE: a published listing with passing releases (real zips, real inspection), at the
 * prices and names the payment tests assume unless they say otherwise.
 */
export function publishListing(
  t: TestApp,
  options: {
    priceMicro?: bigint;
    updatePriceMicro?: bigint;
    versions?: string[];
    status?: 'published' | 'retired';
    slug?: string;
    creator?: RegisteredCreator;
    /** Replaces the scan's counts (what the 402 body discloses). */
    scanCounts?: { blocking: number; disclosed: number; review: number };
  } = {},
): Promise<ListingFixture> {
  return publishedListingFixture(t, {
    slug: options.slug ?? 'tool-kit',
    priceMicro: options.priceMicro ?? 2_000_000n,
    updatePriceMicro: options.updatePriceMicro ?? 500_000n,
    description: 'A toolkit',
    triggerHint: 'when you need tools',
    status: options.status,
    creator: options.creator,
    releases: (options.versions ?? ['1.0.0']).map((version) => ({
      version,
      scan: options.scanCounts ? { counts: options.scanCounts } : undefined,
    })),
  });
}

/** TEST FIXTURE: one more passing release of a fixture listing. */
export function addRelease(t: TestApp, fixture: ListingFixture, version: string): Promise<void> {
  return addFixtureReleases(t, fixture, [{ version }]);
}

export async function fundedWallet(t: PaymentsTestApp, amountMicro: bigint) {
  const wallet = newWallet();
  if (amountMicro > 0n) await t.rail.devnet!.fund(wallet.address, amountMicro);
  return wallet;
}

/** A payment for the 402's accepts[0], signed by the official x402 client scheme. */
export async function signPayment(
  paymentRequired: unknown,
  wallet: ReturnType<typeof newWallet>,
): Promise<string> {
  const client = new x402Client().register('eip155:*', new ExactEvmScheme(wallet)).setSpendControls(false);
  const payload = await client.createPaymentPayload(paymentRequired as PaymentRequired);
  return encodePaymentSignatureHeader(payload);
}

export function buyUrl(fixture: ListingFixture): string {
  return `/api/r/${fixture.owner}/${fixture.slug}`;
}

/** GET the resource: the 402 body (asserting it is one). */
export async function quote(t: TestApp, fixture: ListingFixture, headers: Record<string, string> = {}) {
  const res = await t.app.inject({ url: buyUrl(fixture), headers });
  expect(res.statusCode, res.body).toBe(402);
  return res.json();
}

/** Quote, sign and pay: the paying response. */
export async function buy(t: TestApp, fixture: ListingFixture, wallet: ReturnType<typeof newWallet>) {
  const paymentRequired = await quote(t, fixture, {
    'x-wallet-signature': await walletSignatureHeader(t, wallet),
  });
  return t.app.inject({
    url: buyUrl(fixture),
    headers: {
      'payment-signature': await signPayment(paymentRequired, wallet),
      'x-quote-id': paymentRequired.extra.quote_id,
    },
  });
}

export { walletSignatureHeader };

/** An EIP-3009 authorization for `requirements`, signed by `signer` (default: `wallet`), with overrides: for bad-input tests. */
export async function signAuthorization(
  paymentRequired: {
    accepts: {
      network: string;
      payTo: string;
      amount: string;
      asset: string;
      extra: { name: string; version: string };
    }[];
  } & Record<string, unknown>,
  wallet: ReturnType<typeof newWallet>,
  overrides: Partial<{
    value: bigint;
    validAfter: bigint;
    validBefore: bigint;
    to: `0x${string}`;
    nonce: `0x${string}`;
    /** The EIP-712 domain's chain id; the 402's network's unless a test signs for another chain. */
    chainId: number;
  }> = {},
  signer: ReturnType<typeof newWallet> = wallet,
): Promise<string> {
  const accepted = paymentRequired.accepts[0]!;
  const now = BigInt(Math.floor(Date.now() / 1000));
  const authorization = {
    from: wallet.address,
    to: overrides.to ?? (accepted.payTo as `0x${string}`),
    value: overrides.value ?? BigInt(accepted.amount),
    validAfter: overrides.validAfter ?? 0n,
    validBefore: overrides.validBefore ?? now + 300n,
    nonce: overrides.nonce ?? (`0x${randomBytes(32).toString('hex')}` as `0x${string}`),
  };
  const signature = await signer.signTypedData({
    // As x402 clients do: the token's domain as the 402 announces it.
    domain: {
      name: accepted.extra.name,
      version: accepted.extra.version,
      chainId: overrides.chainId ?? Number(accepted.network.split(':')[1]),
      verifyingContract: accepted.asset as `0x${string}`,
    },
    types: {
      TransferWithAuthorization: [
        { name: 'from', type: 'address' },
        { name: 'to', type: 'address' },
        { name: 'value', type: 'uint256' },
        { name: 'validAfter', type: 'uint256' },
        { name: 'validBefore', type: 'uint256' },
        { name: 'nonce', type: 'bytes32' },
      ],
    },
    primaryType: 'TransferWithAuthorization',
    message: authorization,
  });
  return encodePaymentSignatureHeader({
    x402Version: 2,
    resource: paymentRequired.resource as never,
    accepted: accepted as never,
    payload: {
      signature,
      authorization: {
        ...authorization,
        value: authorization.value.toString(),
        validAfter: authorization.validAfter.toString(),
        validBefore: authorization.validBefore.toString(),
      },
    },
  });
}
