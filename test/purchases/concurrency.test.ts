import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { purchases } from '../../src/db/schema/index.js';
import { BACKENDS } from '../support/db.js';
import {
  buyUrl,
  createPaymentsApp,
  fundedWallet,
  type PaymentsTestApp,
  publishListing,
  quote,
  signPayment,
} from './support.js';

describe.each(BACKENDS)('one authorization sent many times at once on %s', (backend) => {
  let t: PaymentsTestApp;
  beforeEach(async () => {
    t = await createPaymentsApp({ backend, env: { SETTLEMENT_TIMEOUT_MS: '20000' } });
  });
  afterEach(async () => {
    await t.close();
  });

  it('50 concurrent requests: one settlement, one purchase, 49 replays carrying it', async () => {
    const fixture = await publishListing(t, { priceMicro: 2_000_000n });
    const wallet = await fundedWallet(t, 5_000_000n);
    const paymentRequired = await quote(t, fixture);
    const headers = {
      'payment-signature': await signPayment(paymentRequired, wallet),
      'x-quote-id': paymentRequired.extra.quote_id as string,
    };
    const responses = await Promise.all(
      Array.from({ length: 50 }, () => t.app.inject({ url: buyUrl(fixture), headers })),
    );
    const statuses = responses.map((res) => res.statusCode);
    expect(
      statuses.filter((s) => s === 200),
      JSON.stringify(statuses),
    ).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(49);
    const purchaseId = responses.find((res) => res.statusCode === 200)!.json().purchase_id;
    for (const res of responses.filter((r) => r.statusCode === 409)) {
      expect(res.json().code).toBe('replay');
      expect(res.json().details.purchase.purchase_id).toBe(purchaseId);
    }
    expect(await t.ctx.database.db.select().from(purchases)).toHaveLength(1);
    expect(await t.rail.devnet!.balanceOf(wallet.address)).toBe(3_000_000n);
  });
});
