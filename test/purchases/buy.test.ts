import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from '@x402/core/http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BASE } from '../../src/platform/networks.js';
import { BACKENDS } from '../support/db.js';
import {
  buy,
  buyUrl,
  createPaymentsApp,
  fundedWallet,
  type PaymentsTestApp,
  publishListing,
  quote,
  signAuthorization,
  signPayment,
} from './support.js';

describe.each(BACKENDS)('buying on the devnet on %s', (backend) => {
  let t: PaymentsTestApp;
  beforeEach(async () => {
    t = await createPaymentsApp({ backend });
  });
  afterEach(async () => {
    await t.close();
  });

  it('answers the exact 402, in the body and the PAYMENT-REQUIRED header, writing nothing', async () => {
    const fixture = await publishListing(t, { priceMicro: 2_000_000n, updatePriceMicro: 500_000n });
    const res = await t.app.inject({ url: buyUrl(fixture) });
    expect(res.statusCode).toBe(402);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json();
    expect(decodePaymentRequiredHeader(res.headers['payment-required'] as string)).toEqual(body);
    expect(body).toMatchObject({
      x402Version: 2,
      resource: { url: `http://repo402.test${buyUrl(fixture)}`, mimeType: 'application/zip' },
      extra: { kind: 'new', version: '1.0.0', update_price_micro: '500000' },
    });
    expect(body.accepts).toHaveLength(1);
    expect(body.accepts[0]).toMatchObject({
      scheme: 'exact',
      network: 'eip155:8453',
      asset: BASE.usdc,
      payTo: t.rail.payTo,
      amount: '2000000',
      maxAmountRequired: '2000000',
      maxTimeoutSeconds: 300,
      mimeType: 'application/zip',
      // The devnet's own token name: a devnet signature is worthless on Base.
      extra: { name: 'USD Coin (repo402 devnet)', version: '2' },
    });
    expect(body.extra.quote_id).toMatch(/^q1\./);
    expect(Date.parse(body.extra.valid_before)).toBeGreaterThan(Date.now());
    expect(body.extensions.bazaar).toBeDefined();
    for (const field of [
      'manifest_url',
      'scan_badge_url',
      'listing_url',
      'skill_url',
      'mcp_url',
      'instructions',
    ]) {
      expect(body.extra[field], field).toEqual(expect.any(String));
    }
  });

  it('settles a signed payment on chain, then grants the zip; balances move by the price', async () => {
    const fixture = await publishListing(t, { priceMicro: 2_000_000n });
    const wallet = await fundedWallet(t, 5_000_000n);
    const platformBefore = await t.rail.devnet!.balanceOf(t.rail.payTo);
    const res = await buy(t, fixture, wallet);
    expect(res.statusCode, res.body).toBe(200);
    const grant = res.json();
    expect(grant).toMatchObject({
      version: '1.0.0',
      kind: 'new',
      artifact_sha256: fixture.zips.get('1.0.0')!.sha256,
    });
    expect(grant.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    const settlement = decodePaymentResponseHeader(res.headers['payment-response'] as string);
    expect(settlement).toMatchObject({
      success: true,
      transaction: grant.transaction,
      network: 'eip155:8453',
    });
    expect(await t.rail.devnet!.balanceOf(wallet.address)).toBe(3_000_000n);
    expect(await t.rail.devnet!.balanceOf(t.rail.payTo)).toBe(platformBefore + 2_000_000n);
    const download = await t.app.inject({ url: grant.download_url.replace('http://repo402.test', '') });
    expect(download.statusCode).toBe(200);
    expect(download.headers['content-type']).toBe('application/zip');
    expect(download.headers['content-disposition']).toBe(`attachment; filename="${fixture.slug}-1.0.0.zip"`);
    expect(download.rawPayload.equals(fixture.zips.get('1.0.0')!.bytes)).toBe(true);
  });

  it('refuses an undecodable PAYMENT-SIGNATURE with 400 invalid_request, never a silent 402', async () => {
    const fixture = await publishListing(t);
    for (const header of ['not base64!', Buffer.from('{"x402Version":2}').toString('base64'), 'e30=']) {
      const res = await t.app.inject({ url: buyUrl(fixture), headers: { 'payment-signature': header } });
      expect(res.statusCode, header).toBe(400);
      expect(res.json().code).toBe('invalid_request');
    }
  });

  it('needs the quote (X-Quote-Id or echoed in extensions.quote) for a priced buy: else 409 price_changed with a fresh 402', async () => {
    const fixture = await publishListing(t);
    const wallet = await fundedWallet(t, 5_000_000n);
    const paymentRequired = await quote(t, fixture);
    const res = await t.app.inject({
      url: buyUrl(fixture),
      headers: { 'payment-signature': await signAuthorization(paymentRequired, wallet) },
    });
    expect(res.statusCode).toBe(409);
    expect(res.json().code).toBe('price_changed');
    expect(res.json().details.payment_required.accepts[0].amount).toBe('2000000');
    expect(await t.rail.devnet!.balanceOf(wallet.address)).toBe(5_000_000n);
    // The official client echoes the 402's extensions, quote included: no header needed.
    const echoed = await t.app.inject({
      url: buyUrl(fixture),
      headers: { 'payment-signature': await signPayment(paymentRequired, wallet) },
    });
    expect(echoed.statusCode, echoed.body).toBe(200);
  });
});
