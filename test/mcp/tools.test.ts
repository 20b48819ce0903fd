import { createHash } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { purchases } from '../../src/db/schema/index.js';
import { newWallet } from '../identity/support.js';
import {
  createPaymentsApp,
  fundedWallet,
  type PaymentsTestApp,
  signPayment,
  walletSignatureHeader,
} from '../purchases/support.js';
import { patchListingFixture, publishedListingFixture } from '../support/listings.js';

// biome-ignore lint/suspicious/noExplicitAny: tool results are asserted field by field against the live server
type Structured = Record<string, any>;

describe('the buy-side MCP server through the official client', () => {
  let t: PaymentsTestApp;
  let client: Client;
  let transport: StreamableHTTPClientTransport;

  beforeAll(async () => {
    t = await createPaymentsApp();
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    client = new Client({ name: 'repo402-test-agent', version: '1.0.0' });
    transport = new StreamableHTTPClientTransport(new URL(`${base}/api/mcp`));
    await client.connect(transport);
  });
  afterAll(async () => {
    await client?.close();
    await t?.close();
  });

  const call = async (name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as CallToolResult;
  const errorOf = (result: CallToolResult) => {
    expect(result.isError).toBe(true);
    return JSON.parse((result.content[0] as { text: string }).text) as Structured;
  };

  it('lists the five tools, each with an input and an output schema', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(
      ['check_version', 'fetch_release', 'get_listing', 'how_to_buy', 'purchase'].sort(),
    );
    for (const tool of tools) {
      expect(tool.inputSchema.type, tool.name).toBe('object');
      expect(tool.outputSchema?.type, tool.name).toBe('object');
      expect(tool.description, tool.name).toBeTruthy();
    }
  });

  it('answers how_to_buy, get_listing and check_version without a wallet', async () => {
    const f = await publishedListingFixture(t, { priceMicro: 3_000_000n, updatePriceMicro: 0n });
    const how = (await call('how_to_buy', { owner: f.owner, slug: f.slug })).structuredContent as Structured;
    expect(how).toMatchObject({
      for_sale: true,
      price_micro: '3000000',
      update_price_micro: '0',
      version: '1.0.0',
    });
    expect(how.resource_endpoint).toBe(`${t.config.baseUrl}/api/r/${f.owner}/${f.slug}`);
    expect(how.skill_url).toContain('/.well-known/agent-skills/buy-a-repo/SKILL.md');

    const manifest = (await call('get_listing', { owner: f.owner, slug: f.slug }))
      .structuredContent as Structured;
    const label = await t.app.inject({ url: `/api/label/${f.owner}/${f.slug}` });
    const { release_log, ...rest } = manifest;
    const { release_log: labelLog, ...labelRest } = label.json();
    expect(rest).toEqual(labelRest);
    // The release log's first page comes with the manifest (issue 17 item 17).
    const log = await t.app.inject({ url: `/api/v/${f.owner}/${f.slug}/releases` });
    expect(release_log).toEqual({
      ...labelLog,
      url: `${t.config.baseUrl}/api/v/${f.owner}/${f.slug}/releases`,
      releases: log.json().releases,
      next_cursor: log.json().next_cursor,
    });

    const status = (await call('check_version', { owner: f.owner, slug: f.slug }))
      .structuredContent as Structured;
    expect(status).toMatchObject({ version: '1.0.0', price_micro: '3000000' });
    expect(status).not.toHaveProperty('owned');
  });

  it('completes a purchase on devnet by signing the 402 that purchase returned; fetch_release re-fetches', async () => {
    const f = await publishedListingFixture(t, { priceMicro: 2_500_000n, updatePriceMicro: 0n });
    const wallet = await fundedWallet(t, 10_000_000n);
    const payTo = t.rail.payTo;
    const before = {
      buyer: await t.rail.devnet!.balanceOf(wallet.address),
      platform: await t.rail.devnet!.balanceOf(payTo),
    };

    const unpaid = await call('purchase', { owner: f.owner, slug: f.slug });
    expect(unpaid.isError).toBeFalsy();
    const paymentRequired = unpaid.structuredContent as Structured;
    expect(paymentRequired.x402Version).toBe(2);
    expect(paymentRequired.accepts[0]).toMatchObject({
      scheme: 'exact',
      network: 'eip155:8453',
      amount: '2500000',
    });

    const paid = await call('purchase', {
      owner: f.owner,
      slug: f.slug,
      payment_signature: await signPayment(paymentRequired, wallet),
      quote_id: paymentRequired.extra.quote_id,
    });
    expect(paid.isError, JSON.stringify(paid.content)).toBeFalsy();
    const grant = paid.structuredContent as Structured;
    const attestationUrl = `${t.config.baseUrl}/api/v/${f.owner}/${f.slug}/releases/1.0.0/attestation`;
    expect(grant).toMatchObject({ version: '1.0.0', kind: 'new', attestation_url: attestationUrl });
    expect(grant.transaction).toMatch(/^0x[0-9a-f]{64}$/);

    const download = await t.app.inject({ url: new URL(grant.download_url).pathname });
    expect(download.statusCode).toBe(200);
    expect(createHash('sha256').update(download.rawPayload).digest('hex')).toBe(grant.artifact_sha256);
    expect(grant.artifact_sha256).toBe(f.zips.get('1.0.0')!.sha256);

    expect(await t.rail.devnet!.balanceOf(wallet.address)).toBe(before.buyer - 2_500_000n);
    expect(await t.rail.devnet!.balanceOf(payTo)).toBe(before.platform + 2_500_000n);
    const [row] = await t.ctx.database.db
      .select()
      .from(purchases)
      .where(eq(purchases.listingId, f.listingId));
    expect(row?.source).toBe('mcp');

    const refetch = await call('fetch_release', {
      owner: f.owner,
      slug: f.slug,
      version: '1.0.0',
      wallet_signature: await walletSignatureHeader(t, wallet),
    });
    expect(refetch.isError).toBeFalsy();
    expect(refetch.structuredContent).toMatchObject({ kind: 'owned', attestation_url: attestationUrl });

    const owned = await call('check_version', {
      owner: f.owner,
      slug: f.slug,
      wallet_signature: await walletSignatureHeader(t, wallet),
    });
    expect(owned.structuredContent).toMatchObject({ owned: true, entitled: true, price_kind: 'owned' });
  });

  it('buys, re-fetches and checks without HTTP: tools hand out wallet challenges, the 402 is worded for MCP', async () => {
    const f = await publishedListingFixture(t, { priceMicro: 1_500_000n, updatePriceMicro: 0n });
    const wallet = await fundedWallet(t, 5_000_000n);
    const sign = async (challenge: Structured) =>
      Buffer.from(
        JSON.stringify({
          address: challenge.address,
          nonce: challenge.nonce,
          signature: await wallet.signMessage({ message: challenge.message }),
        }),
      ).toString('base64');

    const unpaid = (await call('purchase', { owner: f.owner, slug: f.slug, address: wallet.address }))
      .structuredContent as Structured;
    expect(unpaid.extra.instructions).toContain('`purchase` tool again');
    expect(unpaid.extra.instructions).toContain('payment_signature');
    expect(unpaid.extra.instructions).toContain('quote_id');
    expect(unpaid.extra.instructions).not.toContain('PAYMENT-SIGNATURE');
    expect(unpaid.wallet_challenge).toMatchObject({ address: wallet.address, argument: 'wallet_signature' });
    const paid = await call('purchase', {
      owner: f.owner,
      slug: f.slug,
      payment_signature: await signPayment(unpaid, wallet),
      quote_id: unpaid.extra.quote_id,
    });
    expect(paid.isError, JSON.stringify(paid.content)).toBeFalsy();

    // fetch_release without a signature: the error carries a fresh challenge for the address.
    const withoutAddress = errorOf(
      await call('fetch_release', { owner: f.owner, slug: f.slug, version: '1.0.0' }),
    );
    expect(withoutAddress.code).toBe('invalid_signature');
    expect(withoutAddress.message).toContain('address');
    const needed = errorOf(
      await call('fetch_release', {
        owner: f.owner,
        slug: f.slug,
        version: '1.0.0',
        address: wallet.address,
      }),
    );
    expect(needed.code).toBe('invalid_signature');
    expect(needed.details.wallet_challenge).toMatchObject({
      argument: 'wallet_signature',
      address: wallet.address,
    });
    // It says, as the HTTP route does, whether the version asked for is the one on sale.
    expect(needed.details).toMatchObject({ version: '1.0.0', for_sale: true, version_on_sale: '1.0.0' });
    expect(needed.message).toContain('1.0.0 is the version on sale: the purchase tool quotes its price');
    const refetch = await call('fetch_release', {
      owner: f.owner,
      slug: f.slug,
      version: '1.0.0',
      wallet_signature: await sign(needed.details.wallet_challenge),
    });
    expect(refetch.isError, JSON.stringify(refetch.content)).toBeFalsy();
    expect((refetch.structuredContent as Structured).kind).toBe('owned');
    // Every answer to a call naming the wallet carries the next challenge: signed, it is the next call.
    const next = (refetch.structuredContent as Structured).wallet_challenge;
    expect(next).toMatchObject({ argument: 'wallet_signature', address: wallet.address });
    const status = (
      await call('check_version', { owner: f.owner, slug: f.slug, wallet_signature: await sign(next) })
    ).structuredContent as Structured;
    expect(status).toMatchObject({ owned: true, price_kind: 'owned' });
    expect(status.wallet_challenge.nonce).not.toBe(next.nonce);

    // check_version named by `address` alone: the anonymous answer, and a challenge.
    const anonymous = (await call('check_version', { owner: f.owner, slug: f.slug, address: wallet.address }))
      .structuredContent as Structured;
    expect(anonymous).not.toHaveProperty('owned');
    expect(anonymous.wallet_challenge.address).toBe(wallet.address);
  });

  it('returns failures as isError results carrying the spec error body', async () => {
    const f = await publishedListingFixture(t);
    expect(errorOf(await call('get_listing', { owner: 'nobody-here', slug: 'nothing' }))).toMatchObject({
      code: 'not_found',
      docs_url: `${t.config.baseUrl}/docs/errors#not_found`,
    });
    expect(
      errorOf(
        await call('fetch_release', {
          owner: f.owner,
          slug: f.slug,
          version: '1.0.0',
          wallet_signature: await walletSignatureHeader(t, newWallet()),
        }),
      ).code,
    ).toBe('not_entitled');
    expect(
      errorOf(await call('purchase', { owner: f.owner, slug: f.slug, payment_signature: 'bm90IGpzb24=' }))
        .code,
    ).toBe('invalid_request');
    expect(
      errorOf(await call('check_version', { owner: f.owner, slug: f.slug, wallet_signature: 'forged' })).code,
    ).toBe('invalid_signature');
    // A quote that is no longer current (the price changed): the fresh 402 comes with the error.
    const unpaid = (await call('purchase', { owner: f.owner, slug: f.slug })).structuredContent as Structured;
    const wallet = await fundedWallet(t, 5_000_000n);
    const signed = await signPayment(unpaid, wallet);
    await patchListingFixture(t, f.listingId, { priceMicro: 1_500_000n });
    const stale = errorOf(
      await call('purchase', {
        owner: f.owner,
        slug: f.slug,
        payment_signature: signed,
        quote_id: unpaid.extra.quote_id,
      }),
    );
    expect(stale.code).toBe('price_changed');
    expect(stale.details.payment_required.accepts[0].amount).toBe('1500000');
  });

  it('validates tool arguments', async () => {
    const result = await call('get_listing', { owner: 42 });
    expect(result.isError).toBe(true);
  });
});
