import { eq } from 'drizzle-orm';
import { erc20Abi } from 'viem';
import { afterEach, describe, expect, it } from 'vitest';
import { purchases } from '../../src/db/schema/index.js';
import { sweepPayouts } from '../../src/earnings/payouts.js';
import { issueApiKey } from '../../src/identity/api-keys.js';
import { CURRENT_SCOPES } from '../../src/identity/scopes.js';
import { encodeCursor } from '../../src/platform/cursor.js';
import { buyLatest } from '../../src/purchases/buy.js';
import {
  bearer,
  expectError,
  newWallet,
  type RegisteredCreator,
  registerCreator,
  signedChallenge,
} from '../identity/support.js';
import {
  addRelease,
  buy,
  buyUrl,
  createPaymentsApp,
  fundedWallet,
  type ListingFixture,
  type PaymentsTestApp,
  publishListing,
  quote,
  signPayment,
  walletSignatureHeader,
} from '../purchases/support.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { BACKENDS } from '../support/db.js';

const EXPLORER = 'https://explorer.test/tx/{tx}';
const DAY = 86_400_000;
const ROUTES = [
  '/api/creators/me/sales',
  '/api/creators/me/sales/daily',
  '/api/creators/me/ledger',
  '/api/creators/me/payouts',
];

describe.each(BACKENDS)('a creator’s sales, ledger and payouts on %s', (backend) => {
  let t: PaymentsTestApp;
  afterEach(async () => {
    await t?.close();
  });

  /** The app with a 2.5 % fee and an explorer, unless a test says otherwise. */
  const start = async (env: Record<string, string> = { EXPLORER_TX_URL: EXPLORER }) => {
    t = await createPaymentsApp({ backend, env: { PLATFORM_FEE_BPS: '250', ...env } });
  };
  const get = (url: string, creator: { apiKey: string }) =>
    t.app.inject({ url, headers: bearer(creator.apiKey) });
  const getOk = async (url: string, creator: { apiKey: string }) => {
    const res = await get(url, creator);
    expect(res.statusCode, `${url}: ${res.body}`).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    return res.json();
  };
  /** A paid purchase through the HTTP route; its settlement transaction. */
  const paid = async (fixture: ListingFixture, wallet: ReturnType<typeof newWallet>): Promise<string> => {
    const res = await buy(t, fixture, wallet);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().transaction;
  };
  /** A paid purchase as the MCP `purchase` tool makes it (the same service, `source: mcp`). */
  const paidOverMcp = async (fixture: ListingFixture, wallet: ReturnType<typeof newWallet>) => {
    const paymentRequired = await quote(t, fixture);
    const result = await buyLatest(t.ctx, {
      owner: fixture.owner,
      slug: fixture.slug,
      paymentSignature: await signPayment(paymentRequired, wallet),
      quoteId: paymentRequired.extra.quote_id,
      source: 'mcp',
    });
    expect(result.status).toBe('granted');
    return (result as { grant: { transaction: string } }).grant.transaction;
  };
  const link = (transaction: string) => `https://explorer.test/tx/${transaction}`;
  const utcDate = (at: Date | number) => new Date(at).toISOString().slice(0, 10);

  it('lists paid purchases newest first: buyer, kind, fee and net from the ledger, source and explorer link; free grants are not sales', async () => {
    await start();
    const kit = await publishListing(t, {
      slug: 'tool-kit',
      priceMicro: 2_000_000n,
      updatePriceMicro: 500_000n,
    });
    const creator = kit.creator;
    const other = await publishListing(t, { slug: 'other-kit', priceMicro: 1_000_000n, creator });
    const free = await publishListing(t, { slug: 'free-kit', priceMicro: 0n, creator });
    const [w1, w2, w3] = [
      await fundedWallet(t, 2_500_000n),
      await fundedWallet(t, 2_000_000n),
      await fundedWallet(t, 1_000_000n),
    ];

    const first = await paid(kit, w1);
    t.clock.advance(1000);
    const second = await paid(other, w3);
    t.clock.advance(1000);
    await addRelease(t, kit, '1.1.0');
    const update = await paid(kit, w1);
    t.clock.advance(1000);
    const overMcp = await paidOverMcp(kit, w2);
    const claimed = await t.app.inject({
      url: buyUrl(free),
      headers: { 'x-wallet-signature': await walletSignatureHeader(t, newWallet()) },
    });
    expect(claimed.json()).toMatchObject({ kind: 'free', purchase_id: expect.any(String) });

    const all = await getOk('/api/creators/me/sales', creator);
    const listing = (fixture: ListingFixture) => ({
      id: fixture.listingId,
      owner: fixture.owner,
      slug: fixture.slug,
    });
    const at = (ago: number) => new Date(t.clock.now().getTime() - ago).toISOString();
    expect(all).toEqual({
      sales: [
        {
          id: expect.any(String),
          listing: listing(kit),
          buyer: w2.address.toLowerCase(),
          version: '1.1.0',
          kind: 'new',
          from_version: null,
          amount_micro: '2000000',
          fee_micro: '50000',
          net_micro: '1950000',
          transaction: overMcp,
          transaction_url: link(overMcp),
          source: 'mcp',
          created_at: at(0),
        },
        {
          id: expect.any(String),
          listing: listing(kit),
          buyer: w1.address.toLowerCase(),
          version: '1.1.0',
          kind: 'update',
          from_version: '1.0.0',
          amount_micro: '500000',
          fee_micro: '12500',
          net_micro: '487500',
          transaction: update,
          transaction_url: link(update),
          source: 'http',
          created_at: at(1000),
        },
        {
          id: expect.any(String),
          listing: listing(other),
          buyer: w3.address.toLowerCase(),
          version: '1.0.0',
          kind: 'new',
          from_version: null,
          amount_micro: '1000000',
          fee_micro: '25000',
          net_micro: '975000',
          transaction: second,
          transaction_url: link(second),
          source: 'http',
          created_at: at(2000),
        },
        {
          id: expect.any(String),
          listing: listing(kit),
          buyer: w1.address.toLowerCase(),
          version: '1.0.0',
          kind: 'new',
          from_version: null,
          amount_micro: '2000000',
          fee_micro: '50000',
          net_micro: '1950000',
          transaction: first,
          transaction_url: link(first),
          source: 'http',
          created_at: at(3000),
        },
      ],
      next_cursor: null,
    });
    for (const transaction of [first, second, update, overMcp])
      expect(transaction).toMatch(/^0x[0-9a-f]{64}$/);

    // The sale ids are the purchase ids buyers see in their grants and entitlements.
    const rows = await t.ctx.database.db
      .select()
      .from(purchases)
      .where(eq(purchases.listingId, kit.listingId));
    expect(
      all.sales
        .filter((sale: { listing: { id: string } }) => sale.listing.id === kit.listingId)
        .map((sale: { id: string }) => sale.id)
        .sort(),
    ).toEqual(rows.map((row) => row.id).sort());

    const onlyOther = await getOk(`/api/creators/me/sales?listing_id=${other.listingId}`, creator);
    expect(onlyOther).toEqual({ sales: [all.sales[2]], next_cursor: null });
    expect(await getOk(`/api/creators/me/sales?listing_id=${free.listingId}`, creator)).toEqual({
      sales: [],
      next_cursor: null,
    });
  });

  it('pages sales, ledger entries and payouts with opaque cursors that later inserts do not shift', async () => {
    await start();
    const kit = await publishListing(t, { priceMicro: 1_000_000n, updatePriceMicro: 0n });
    const creator = kit.creator;
    // Two sales share a timestamp: the id breaks the tie, so neither is skipped nor repeated.
    await paid(kit, await fundedWallet(t, 1_000_000n));
    t.clock.advance(1000);
    await paid(kit, await fundedWallet(t, 1_000_000n));
    await paid(kit, await fundedWallet(t, 1_000_000n));
    t.clock.advance(1000);
    await paid(kit, await fundedWallet(t, 1_000_000n));
    const everything = (await getOk('/api/creators/me/sales', creator)).sales as { id: string }[];
    expect(everything).toHaveLength(4);

    const firstPage = await getOk('/api/creators/me/sales?limit=3', creator);
    expect(firstPage.sales).toEqual(everything.slice(0, 3));
    expect(firstPage.next_cursor).toEqual(expect.any(String));
    // A sale made meanwhile is newer than the cursor: it is on no later page.
    t.clock.advance(1000);
    await paid(kit, await fundedWallet(t, 1_000_000n));
    const secondPage = await getOk(`/api/creators/me/sales?limit=3&cursor=${firstPage.next_cursor}`, creator);
    expect(secondPage).toEqual({ sales: everything.slice(3), next_cursor: null });

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { sales: { id: string }[]; next_cursor: string | null } = await getOk(
        `/api/creators/me/sales?limit=1${cursor ? `&cursor=${cursor}` : ''}`,
        creator,
      );
      expect(page.sales.length).toBe(1);
      seen.push(page.sales[0]!.id);
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen).toHaveLength(5);
    expect(seen.slice(1)).toEqual(everything.map((sale) => sale.id));

    const ledger = await getOk('/api/creators/me/ledger?limit=2', creator);
    expect(ledger.entries).toHaveLength(2);
    const rest = await getOk(`/api/creators/me/ledger?limit=100&cursor=${ledger.next_cursor}`, creator);
    expect(rest.entries).toHaveLength(3);
    expect(rest.next_cursor).toBeNull();
    // The balance is over every entry, whatever the page.
    expect(rest.balance_micro).toBe('4875000');
    expect(ledger.balance_micro).toBe('4875000');
    expect(new Set([...ledger.entries, ...rest.entries].map((entry: { id: string }) => entry.id)).size).toBe(
      5,
    );
  });

  it('sums sales per UTC day in the database, zero days included, oldest first, ending today', async () => {
    await start();
    const kit = await publishListing(t, { priceMicro: 2_000_000n, updatePriceMicro: 0n });
    const creator = kit.creator;
    const free = await publishListing(t, { slug: 'free-kit', priceMicro: 0n, creator });
    await t.app.inject({
      url: buyUrl(free),
      headers: { 'x-wallet-signature': await walletSignatureHeader(t, newWallet()) },
    });
    for (let i = 0; i < 3; i += 1) await paid(kit, await fundedWallet(t, 2_000_000n));
    const now = t.clock.now();
    const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
    // One sale recorded the last millisecond of yesterday, one the first of today.
    const [a, b] = await t.ctx.database.db
      .select()
      .from(purchases)
      .where(eq(purchases.listingId, kit.listingId));
    await t.ctx.database.db
      .update(purchases)
      .set({ createdAt: new Date(midnight - 1) })
      .where(eq(purchases.id, a!.id));
    await t.ctx.database.db
      .update(purchases)
      .set({ createdAt: new Date(midnight) })
      .where(eq(purchases.id, b!.id));

    const zero = (date: string) => ({ date, sales: 0, amount_micro: '0', net_micro: '0' });
    expect(await getOk('/api/creators/me/sales/daily?days=3', creator)).toEqual({
      days: [
        zero(utcDate(midnight - 2 * DAY)),
        { date: utcDate(midnight - DAY), sales: 1, amount_micro: '2000000', net_micro: '1950000' },
        { date: utcDate(midnight), sales: 2, amount_micro: '4000000', net_micro: '3900000' },
      ],
    });
    expect(await getOk('/api/creators/me/sales/daily?days=1', creator)).toEqual({
      days: [{ date: utcDate(midnight), sales: 2, amount_micro: '4000000', net_micro: '3900000' }],
    });
    const month = (await getOk('/api/creators/me/sales/daily', creator)).days;
    expect(month).toHaveLength(30);
    expect(month[0].date).toBe(utcDate(midnight - 29 * DAY));
    expect(month.at(-1).date).toBe(utcDate(midnight));
    expect(month.reduce((sum: number, day: { sales: number }) => sum + day.sales, 0)).toBe(3);
    expect((await getOk('/api/creators/me/sales/daily?days=366', creator)).days).toHaveLength(366);

    // Two days on, today and yesterday had none.
    t.clock.advance(2 * DAY);
    expect((await getOk('/api/creators/me/sales/daily?days=4', creator)).days).toEqual([
      { date: utcDate(midnight - DAY), sales: 1, amount_micro: '2000000', net_micro: '1950000' },
      { date: utcDate(midnight), sales: 2, amount_micro: '4000000', net_micro: '3900000' },
      zero(utcDate(midnight + DAY)),
      zero(utcDate(midnight + 2 * DAY)),
    ]);
  });

  it('shows the balance over every entry after a failed payout (reversed) and a sent one; payouts carry their transaction, never its raw bytes', async () => {
    await start();
    const kit = await publishListing(t, { priceMicro: 1_000_000n });
    const creator = kit.creator;
    await paid(kit, await fundedWallet(t, 1_000_000n));

    // Empty the platform wallet for real: the payout's gas estimate reverts, so it is reversed.
    const devnet = t.rail.devnet!;
    const held = await devnet.balanceOf(t.rail.payTo);
    await devnet.publicClient.waitForTransactionReceipt({
      hash: await devnet.walletClient.writeContract({
        account: devnet.platform,
        chain: devnet.walletClient.chain,
        address: t.rail.asset,
        abi: erc20Abi,
        functionName: 'transfer',
        args: [newWallet().address, held],
      }),
    });
    t.clock.advance(1000);
    const [failed] = await sweepPayouts(t.ctx);
    expect(failed).toMatchObject({ state: 'failed' });
    await devnet.fund(t.rail.payTo, held);
    t.clock.advance(1000);
    const [sent] = await sweepPayouts(t.ctx);
    expect(sent).toMatchObject({ state: 'sent', amountMicro: 975_000n });
    t.clock.advance(1000);
    await paid(kit, await fundedWallet(t, 1_000_000n));

    const ledger = await getOk('/api/creators/me/ledger', creator);
    expect(ledger).toMatchObject({
      balance_micro: '975000',
      credited_micro: '1950000',
      swept_micro: '975000',
      next_cursor: null,
    });
    const sales = (await getOk('/api/creators/me/sales', creator)).sales;
    const at = (ago: number) => new Date(t.clock.now().getTime() - ago).toISOString();
    const entry = (fields: object) => ({
      id: expect.any(String),
      amount_micro: '975000',
      fee_micro: '0',
      purchase_id: null,
      sweep_id: null,
      ...fields,
    });
    expect(ledger.entries).toHaveLength(5);
    expect(ledger.entries[0]).toEqual(
      entry({ kind: 'credit', fee_micro: '25000', purchase_id: sales[0].id, created_at: at(0) }),
    );
    expect(ledger.entries[1]).toEqual(entry({ kind: 'sweep', sweep_id: sent!.id, created_at: at(1000) }));
    // The failed sweep and its reversal share a timestamp: the id orders them.
    const pair = ledger.entries.slice(2, 4);
    expect(pair).toEqual(
      expect.arrayContaining([
        entry({ kind: 'sweep', sweep_id: failed!.id, created_at: at(2000) }),
        entry({ kind: 'sweep_reversal', sweep_id: failed!.id, created_at: at(2000) }),
      ]),
    );
    expect(pair[0].id > pair[1].id).toBe(true);
    expect(ledger.entries[4]).toEqual(
      entry({ kind: 'credit', fee_micro: '25000', purchase_id: sales[1].id, created_at: at(3000) }),
    );

    const payouts = await getOk('/api/creators/me/payouts', creator);
    const address = creator.wallet.address.toLowerCase();
    expect(payouts).toEqual({
      payouts: [
        {
          id: sent!.id,
          address,
          amount_micro: '975000',
          state: 'sent',
          transaction: sent!.transaction,
          transaction_url: link(sent!.transaction!),
          error: null,
          created_at: at(1000),
          finished_at: at(1000),
        },
        {
          id: failed!.id,
          address,
          amount_micro: '975000',
          state: 'failed',
          transaction: null,
          transaction_url: null,
          error: expect.any(String),
          created_at: at(2000),
          finished_at: at(2000),
        },
      ],
      next_cursor: null,
    });
    expect(sent!.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(JSON.stringify(payouts)).not.toContain('raw');
    const firstPayout = await getOk('/api/creators/me/payouts?limit=1', creator);
    expect(firstPayout.payouts).toEqual([payouts.payouts[0]]);
    expect(
      (await getOk(`/api/creators/me/payouts?limit=1&cursor=${firstPayout.next_cursor}`, creator)).payouts,
    ).toEqual([payouts.payouts[1]]);
  });

  it('answers a creator with nothing sold with zeros and empty pages; without EXPLORER_TX_URL on devnet no transaction has a link', async () => {
    await start({});
    const creator = await registerCreator(t);
    expect(await getOk('/api/creators/me/sales', creator)).toEqual({ sales: [], next_cursor: null });
    expect(await getOk('/api/creators/me/payouts', creator)).toEqual({ payouts: [], next_cursor: null });
    expect(await getOk('/api/creators/me/ledger', creator)).toEqual({
      balance_micro: '0',
      credited_micro: '0',
      swept_micro: '0',
      entries: [],
      next_cursor: null,
    });
    const kit = await publishListing(t, { priceMicro: 1_000_000n, creator });
    const transaction = await paid(kit, await fundedWallet(t, 1_000_000n));
    expect((await getOk('/api/creators/me/sales', creator)).sales).toEqual([
      expect.objectContaining({ transaction, transaction_url: null }),
    ]);
  });

  it('refuses bad cursors, limits, days and listing ids with 400 invalid_request naming the field, and an unknown listing with 404', async () => {
    await start();
    const creator = await registerCreator(t);
    const expectInvalid = async (url: string, field: string) => {
      const res = await get(url, creator);
      expectError(res, 400, 'invalid_request');
      expect(
        res.json().details.issues.map((issue: { field: string }) => issue.field),
        url,
      ).toContain(field);
    };
    for (const path of ['/api/creators/me/sales', '/api/creators/me/ledger', '/api/creators/me/payouts']) {
      for (const cursor of [
        'not-a-cursor!',
        'abc',
        encodeCursor({ t: 'yesterday', id: 'x' }),
        encodeCursor([1]),
      ])
        await expectInvalid(`${path}?cursor=${encodeURIComponent(cursor)}`, 'cursor');
      for (const limit of ['0', '101', '-1', '1.5', 'ten', ''])
        await expectInvalid(`${path}?limit=${limit}`, 'limit');
      await expectInvalid(`${path}?unknown=1`, 'unknown');
    }
    for (const days of ['0', '367', '1000', '-3', 'x', '7.5', ''])
      await expectInvalid(`/api/creators/me/sales/daily?days=${days}`, 'days');
    await expectInvalid('/api/creators/me/sales/daily?limit=3', 'limit');
    await expectInvalid('/api/creators/me/sales?listing_id=not-a-uuid', 'listing_id');
    const unknown = await get(`/api/creators/me/sales?listing_id=${crypto.randomUUID()}`, creator);
    expectError(unknown, 404, 'not_found');
    expect(unknown.headers['cache-control']).toBe('no-store');
  });

  it('needs a key with sales:read: none is 401, an older key without the scope 403, a web session has it', async () => {
    await start();
    const creator = await registerCreator(t);
    const older = await issueApiKey(t.ctx.database.db, {
      creatorId: creator.id,
      kind: 'agent',
      at: t.clock.now(),
      scopes: CURRENT_SCOPES.filter((scope) => scope !== 'sales:read'),
    });
    const session = await t.app.inject({
      method: 'POST',
      url: '/api/auth/sessions',
      payload: {
        address: creator.wallet.address,
        ...(await signedChallenge(t, creator.wallet, 'wallet_ownership')),
      },
    });
    expect(session.json().scopes).toContain('sales:read');
    for (const url of ROUTES) {
      expectError(await t.app.inject({ url }), 401, 'invalid_key');
      expectError(await t.app.inject({ url, headers: bearer('r402_not-a-key') }), 401, 'invalid_key');
      const refused = await get(url, { apiKey: older.apiKey });
      expectError(refused, 403, 'insufficient_scope');
      expect(refused.headers['cache-control']).toBe('no-store');
      expect((await get(url, { apiKey: session.json().api_key })).statusCode).toBe(200);
    }
    // Listing reads do not open the sales.
    expect((await get('/api/listings', { apiKey: older.apiKey })).statusCode).toBe(200);
  });

  it("never shows one creator another's sales, ledger or payouts; another's listing id is the same 404 as an unknown one", async () => {
    await start();
    const alice = (await publishListing(t, { slug: 'alice-kit', priceMicro: 1_000_000n })) as ListingFixture;
    const bob = await publishListing(t, { slug: 'bob-kit', priceMicro: 3_000_000n });
    await paid(alice, await fundedWallet(t, 1_000_000n));
    t.clock.advance(1000);
    await paid(bob, await fundedWallet(t, 3_000_000n));
    await sweepPayouts(t.ctx);

    const salesOf = async (creator: RegisteredCreator) =>
      (await getOk('/api/creators/me/sales', creator)).sales;
    expect(
      (await salesOf(alice.creator)).map((sale: { listing: { id: string } }) => sale.listing.id),
    ).toEqual([alice.listingId]);
    expect((await salesOf(bob.creator)).map((sale: { listing: { id: string } }) => sale.listing.id)).toEqual([
      bob.listingId,
    ]);

    const aliceLedger = await getOk('/api/creators/me/ledger', alice.creator);
    const bobLedger = await getOk('/api/creators/me/ledger', bob.creator);
    expect(aliceLedger).toMatchObject({
      credited_micro: '975000',
      swept_micro: '975000',
      balance_micro: '0',
    });
    expect(bobLedger).toMatchObject({
      credited_micro: '2925000',
      swept_micro: '2925000',
      balance_micro: '0',
    });
    const ids = (ledger: { entries: { id: string }[] }) => ledger.entries.map((entry) => entry.id);
    expect(ids(aliceLedger).filter((id) => ids(bobLedger).includes(id))).toEqual([]);

    const alicePayouts = (await getOk('/api/creators/me/payouts', alice.creator)).payouts;
    const bobPayouts = (await getOk('/api/creators/me/payouts', bob.creator)).payouts;
    expect(alicePayouts.map((payout: { amount_micro: string }) => payout.amount_micro)).toEqual(['975000']);
    expect(bobPayouts.map((payout: { amount_micro: string }) => payout.amount_micro)).toEqual(['2925000']);

    const theirs = await get(`/api/creators/me/sales?listing_id=${alice.listingId}`, bob.creator);
    const unknown = await get(`/api/creators/me/sales?listing_id=${crypto.randomUUID()}`, bob.creator);
    expectError(theirs, 404, 'not_found');
    expect(theirs.json()).toEqual(unknown.json());

    // Bob's daily sums are Bob's alone.
    const today = (await getOk('/api/creators/me/sales/daily?days=1', bob.creator)).days;
    expect(today).toEqual([
      { date: utcDate(t.clock.now()), sales: 1, amount_micro: '3000000', net_micro: '2925000' },
    ]);
  });
});

describe('the creator’s sales routes in the OpenAPI document', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
  });

  it('tags each creator, requires sales:read and names its schemas and error codes', async () => {
    t = await createTestApp();
    const doc = (await t.app.inject({ url: '/api/openapi.json' })).json();
    const expected: Record<string, { schema: string; statuses: string[] }> = {
      '/api/creators/me/sales': { schema: 'SalesPage', statuses: ['400', '401', '403', '404', '429'] },
      '/api/creators/me/sales/daily': { schema: 'DailySales', statuses: ['400', '401', '403', '429'] },
      '/api/creators/me/ledger': { schema: 'Ledger', statuses: ['400', '401', '403', '429'] },
      '/api/creators/me/payouts': { schema: 'PayoutsPage', statuses: ['400', '401', '403', '429'] },
    };
    for (const [path, { schema, statuses }] of Object.entries(expected)) {
      const operation = doc.paths[path]?.get;
      expect(operation, path).toBeDefined();
      expect(operation.tags).toEqual(['creator']);
      expect(operation.security).toEqual([{ apiKey: ['sales:read'] }]);
      expect(operation.responses['200'].content['application/json'].schema).toEqual({
        $ref: `#/components/schemas/${schema}`,
      });
      expect(Object.keys(operation.responses).sort()).toEqual(['200', ...statuses, '500', '503'].sort());
    }
    const micro = { type: 'string', pattern: '^(0|[1-9][0-9]*)$' };
    const { Sale, Payout, Ledger } = doc.components.schemas;
    for (const field of ['amount_micro', 'fee_micro', 'net_micro'])
      expect(Sale.properties[field]).toMatchObject(micro);
    for (const field of ['balance_micro', 'credited_micro', 'swept_micro'])
      expect(Ledger.properties[field]).toMatchObject(micro);
    expect(Object.keys(Payout.properties)).not.toContain('raw_transaction');
  });
});
