import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newWallet } from '../identity/support.js';
import { patchListingFixture } from '../support/listings.js';
import {
  addRelease,
  buy,
  buyUrl,
  createPaymentsApp,
  fundedWallet,
  type ListingFixture,
  type PaymentsTestApp,
  publishListing,
  walletSignatureHeader,
} from './support.js';

/**
 * One price for one buyer wherever it is shown: version status (HTTP and MCP `check_version`), the
 * 402 or grant (HTTP and MCP `purchase`), and the listed prices (label, MCP `how_to_buy`, the home
 * page's listings). Each caller is asked on its own and compared with the case's expected kind and
 * amount, so a caller that priced on its own would fail here.
 */

// biome-ignore lint/suspicious/noExplicitAny: wire bodies are read field by field
type Body = Record<string, any>;
type Wallet = ReturnType<typeof newWallet>;

/** What a caller says the wallet would get: `price_kind` and what it would pay (null: owned). */
interface Seen {
  kind: 'new' | 'update' | 'free' | 'owned';
  amount: string | null;
}

describe('the offer agrees across version status, the 402, the MCP tools, the label, discovery and the home page', () => {
  let t: PaymentsTestApp;
  let client: Client;

  beforeAll(async () => {
    t = await createPaymentsApp();
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    client = new Client({ name: 'offer-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/api/mcp`)));
  });
  afterAll(async () => {
    await client?.close();
    await t?.close();
  });

  const tool = async (name: string, args: Record<string, unknown>): Promise<Body> => {
    const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    return result.structuredContent as Body;
  };
  const signature = (wallet: Wallet) => walletSignatureHeader(t, wallet);

  /** Version status states a kind; the amount is the listed price that kind pays. */
  const fromStatus = (status: Body): Seen => ({
    kind: status.price_kind,
    amount: {
      new: status.price_micro,
      update: status.update_price_micro,
      free: '0',
      owned: null,
    }[status.price_kind as Seen['kind']],
  });
  /** The buy answer: a 402 quotes kind and amount; a grant is free or owned. */
  const fromPurchase = (body: Body): Seen =>
    body.x402Version === 2
      ? { kind: body.extra.kind, amount: body.accepts[0].amount }
      : { kind: body.kind, amount: body.kind === 'free' ? '0' : null };

  /**
   * Asks every caller in turn, the read-only ones first. A free grant records the version as held,
   * so where it may be free the MCP purchase is asked for `twin`, a wallet holding the same.
   */
  async function seenBy(fixture: ListingFixture, wallet: Wallet, twin: Wallet = wallet) {
    const names = { owner: fixture.owner, slug: fixture.slug };
    const status = await t.app.inject({
      url: `/api/v/${fixture.owner}/${fixture.slug}`,
      headers: { 'x-wallet-signature': await signature(wallet) },
    });
    expect(status.statusCode, status.body).toBe(200);
    const checkVersion = await tool('check_version', { ...names, wallet_signature: await signature(wallet) });
    const resource = await t.app.inject({
      url: buyUrl(fixture),
      headers: { 'x-wallet-signature': await signature(wallet) },
    });
    expect([200, 402], resource.body).toContain(resource.statusCode);
    const purchase = await tool('purchase', { ...names, wallet_signature: await signature(twin) });
    return {
      versionStatus: fromStatus(status.json()),
      checkVersion: fromStatus(checkVersion),
      resource: fromPurchase(resource.json()),
      purchase: fromPurchase(purchase),
    };
  }

  /** The listed prices every anonymous reader sees, and what an anonymous buyer is quoted. */
  async function listedBy(fixture: ListingFixture) {
    const names = { owner: fixture.owner, slug: fixture.slug };
    const prices = (body: Body) => ({ price: body.price_micro, update: body.update_price_micro });
    const anonymous = await t.app.inject({ url: buyUrl(fixture) });
    const discovery = (await t.app.inject({ url: '/.well-known/x402' })).json();
    const item = discovery.items.find(
      (entry: Body) => entry.metadata.channel === `${fixture.owner}/${fixture.slug}`,
    );
    const channel = `${fixture.owner}/${fixture.slug}`;
    const home = (await t.app.inject({ url: `/?q=${channel}` })).body;
    return {
      home: new RegExp(`data-listing="${channel}"[^]*?data-price-micro="([0-9]+)"`).exec(home)?.[1],
      discovery: { price: item.accepts[0].amount, update: item.metadata.update_price_micro },
      label: prices((await t.app.inject({ url: `/api/label/${fixture.owner}/${fixture.slug}` })).json()),
      howToBuy: prices(await tool('how_to_buy', names)),
      versionStatus: prices((await t.app.inject({ url: `/api/v/${fixture.owner}/${fixture.slug}` })).json()),
      checkVersion: prices(await tool('check_version', names)),
      quoted: fromPurchase(anonymous.json()),
    };
  }

  async function expectAgreement(
    fixture: ListingFixture,
    [wallet, twin]: [Wallet] | [Wallet, Wallet],
    expected: Seen,
    listed: { price: string; update: string },
  ) {
    const seen = await seenBy(fixture, wallet, twin);
    expect(seen).toEqual({
      versionStatus: expected,
      checkVersion: expected,
      resource: expected,
      purchase: expected,
    });
    const anonymous = await listedBy(fixture);
    expect(anonymous).toEqual({
      home: listed.price,
      discovery: listed,
      label: listed,
      howToBuy: listed,
      versionStatus: listed,
      checkVersion: listed,
      quoted: listed.price === '0' ? { kind: 'free', amount: '0' } : { kind: 'new', amount: listed.price },
    });
  }

  it('new: a wallet holding nothing is quoted the price', async () => {
    const fixture = await publishListing(t, {
      slug: 'offer-new',
      priceMicro: 2_000_000n,
      updatePriceMicro: 500_000n,
    });
    await expectAgreement(
      fixture,
      [newWallet()],
      { kind: 'new', amount: '2000000' },
      { price: '2000000', update: '500000' },
    );
  });

  it('update and held: a holder of an earlier version is quoted the update price; the latest held is owned', async () => {
    const fixture = await publishListing(t, {
      slug: 'offer-update',
      priceMicro: 2_000_000n,
      updatePriceMicro: 500_000n,
    });
    const wallet = await fundedWallet(t, 10_000_000n);
    expect((await buy(t, fixture, wallet)).statusCode).toBe(200);
    const listed = { price: '2000000', update: '500000' };
    await expectAgreement(fixture, [wallet], { kind: 'owned', amount: null }, listed);
    await addRelease(t, fixture, '1.1.0');
    await expectAgreement(fixture, [wallet], { kind: 'update', amount: '500000' }, listed);
  });

  it('all versions: bought while updates were free, later versions stay owned at a new update price', async () => {
    const fixture = await publishListing(t, {
      slug: 'offer-all',
      priceMicro: 1_000_000n,
      updatePriceMicro: 0n,
    });
    const wallet = await fundedWallet(t, 5_000_000n);
    expect((await buy(t, fixture, wallet)).statusCode).toBe(200);
    await patchListingFixture(t, fixture.listingId, { updatePriceMicro: 700_000n });
    await addRelease(t, fixture, '2.0.0');
    await expectAgreement(
      fixture,
      [wallet],
      { kind: 'owned', amount: null },
      { price: '1000000', update: '700000' },
    );
  });

  it('free: a listing at zero, and an update made free for holders who paid for theirs', async () => {
    const free = await publishListing(t, { slug: 'offer-free', priceMicro: 0n, updatePriceMicro: 0n });
    await expectAgreement(
      free,
      [newWallet(), newWallet()],
      { kind: 'free', amount: '0' },
      { price: '0', update: '0' },
    );

    const paid = await publishListing(t, {
      slug: 'offer-free-update',
      priceMicro: 1_000_000n,
      updatePriceMicro: 300_000n,
    });
    const holders = [await fundedWallet(t, 5_000_000n), await fundedWallet(t, 5_000_000n)] as const;
    for (const holder of holders) expect((await buy(t, paid, holder)).statusCode).toBe(200);
    await patchListingFixture(t, paid.listingId, { updatePriceMicro: 0n });
    await addRelease(t, paid, '1.1.0');
    await expectAgreement(
      paid,
      [...holders],
      { kind: 'free', amount: '0' },
      { price: '1000000', update: '0' },
    );
  });
});
