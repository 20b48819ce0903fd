import os from 'node:os';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { operations } from '../../src/operations.js';
import { specVerify } from '../attestations/support.js';
import { bearer, expectError } from '../identity/support.js';
import {
  buy,
  buyUrl,
  createPaymentsApp,
  fundedWallet,
  type PaymentsTestApp,
  publishListing,
  quote,
  walletSignatureHeader,
} from '../purchases/support.js';
import { BACKENDS } from '../support/db.js';

// biome-ignore lint/suspicious/noExplicitAny: answers are asserted field by field
type Json = Record<string, any>;

/** An operator command as `repo402` runs it in the server (its schema parses the arguments first). */
async function operate(t: PaymentsTestApp, name: keyof typeof operations, args: Record<string, unknown>) {
  const operation = operations[name];
  return operation.run(t.ctx, operation.args.parse(args) as never);
}

describe.each(BACKENDS)('a report, then a yank, on %s', (backend) => {
  let t: PaymentsTestApp | undefined;
  let client: Client | undefined;
  afterEach(async () => {
    await client?.close();
    await t?.close();
    t = client = undefined;
  });

  it('the yanked release answers 410 release_yanked on download and re-fetch, stays in the log marked, its holder gets the newest passing release free, and its attestation still verifies', {
    timeout: 120_000,
  }, async () => {
    t = await createPaymentsApp({ backend });
    const app = t;
    const f = await publishListing(app, { versions: ['1.0.0', '1.1.0'] });
    const name = `${f.owner}/${f.slug}`;
    const holder = await fundedWallet(app, 10_000_000n);
    const bought = await buy(app, f, holder);
    expect(bought.statusCode, bought.body).toBe(200);
    const grant = bought.json() as Json;
    expect(grant.version).toBe('1.1.0');

    // Someone reports it; the creator is told in words.
    const report = await app.app.inject({
      method: 'POST',
      url: '/api/reports',
      payload: {
        listing: name,
        version: '1.1.0',
        category: 'malware',
        text: 'The install script posts ~/.ssh to a remote host.',
      },
    });
    expect(report.statusCode, report.body).toBe(201);

    // The operator yanks it.
    const reason = 'malware: the install script exfiltrates SSH keys';
    expect(await operate(app, 'releases.yank', { listing: name, version: '1.1.0', reason })).toEqual({
      listing: name,
      version: '1.1.0',
      yanked: true,
    });

    // The grant's download and the holder's re-fetch: 410 release_yanked with the reason.
    const download = await app.app.inject({ url: new URL(grant.download_url).pathname });
    expectError(download, 410, 'release_yanked');
    expect(download.json().details).toMatchObject({ version: '1.1.0', reason });
    const refetch = await app.app.inject({
      url: `${buyUrl(f)}/v/1.1.0`,
      headers: { 'x-wallet-signature': await walletSignatureHeader(app, holder) },
    });
    expectError(refetch, 410, 'release_yanked');
    expect(refetch.json().details.reason).toBe(reason);
    expect(refetch.json().docs_url).toMatch(/\/docs\/errors#release_yanked$/);

    // The log still lists it, marked, and 1.0.0 is the version on sale again.
    const log = (await app.app.inject({ url: `/api/v/${name}/releases` })).json() as Json;
    expect(log.version_on_sale).toBe('1.0.0');
    expect(log.releases.map((r: Json) => r.version)).toEqual(['1.1.0', '1.0.0']);
    expect(log.releases[0]).toMatchObject({
      on_sale: false,
      yanked: { reason, yanked_at: expect.any(String) },
    });
    expect(log.releases[1]).not.toHaveProperty('yanked');
    const page = await app.app.inject({ url: `/${name}` });
    expect(page.body).toContain('data-yanked="1.1.0"');
    expect(page.body).toContain(reason);
    // The feed says so too.
    const feed = await app.app.inject({ url: `/${name}/releases.atom` });
    expect(feed.body).toContain('1.1.0: withdrawn by the operator');
    expect(feed.body).toContain(reason);

    // A new buyer is quoted 1.0.0; the holder's status says plainly what it holds.
    expect((await quote(app, f)).extra.version).toBe('1.0.0');
    const status = (
      await app.app.inject({
        url: `/api/v/${name}`,
        headers: { 'x-wallet-signature': await walletSignatureHeader(app, holder) },
      })
    ).json() as Json;
    expect(status).toMatchObject({
      version: '1.0.0',
      price_kind: 'free',
      owned: false,
      yanked_holdings: [{ version: '1.1.0', reason }],
    });

    // An agent polling over MCP learns the same: check_version names the yanked holding, and
    // fetch_release of it is the same 410 as the HTTP route.
    const base = await app.app.listen({ port: 0, host: '127.0.0.1' });
    client = new Client({ name: 'repo402-test-agent', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/api/mcp`)));
    const checked = (await client.callTool({
      name: 'check_version',
      arguments: { owner: f.owner, slug: f.slug, wallet_signature: await walletSignatureHeader(app, holder) },
    })) as CallToolResult;
    expect(checked.structuredContent).toMatchObject({
      version: '1.0.0',
      price_kind: 'free',
      yanked_holdings: [{ version: '1.1.0', reason }],
    });
    const fetched = (await client.callTool({
      name: 'fetch_release',
      arguments: {
        owner: f.owner,
        slug: f.slug,
        version: '1.1.0',
        wallet_signature: await walletSignatureHeader(app, holder),
      },
    })) as CallToolResult;
    expect(fetched.isError).toBe(true);
    expect(JSON.parse((fetched.content[0] as { text: string }).text)).toMatchObject({
      code: 'release_yanked',
      details: { reason },
    });

    // The holder fetches the newest passing release free, and owns it from then on.
    const replaced = await app.app.inject({
      url: buyUrl(f),
      headers: { 'x-wallet-signature': await walletSignatureHeader(app, holder) },
    });
    expect(replaced.statusCode, replaced.body).toBe(200);
    expect(replaced.json()).toMatchObject({ version: '1.0.0', kind: 'free' });
    const zip = await app.app.inject({ url: new URL(replaced.json().download_url).pathname });
    expect(zip.statusCode).toBe(200);
    expect(zip.rawPayload.equals(f.zips.get('1.0.0')!.bytes)).toBe(true);
    const again = await app.app.inject({
      url: `${buyUrl(f)}/v/1.0.0`,
      headers: { 'x-wallet-signature': await walletSignatureHeader(app, holder) },
    });
    expect(again.statusCode, again.body).toBe(200);
    // A stranger is still asked to pay.
    expect((await app.app.inject({ url: buyUrl(f) })).statusCode).toBe(402);

    // The yanked release's attestation stays and still verifies against its zip.
    const envelope = await app.app.inject({ url: `/api/v/${name}/releases/1.1.0/attestation` });
    expect(envelope.statusCode).toBe(200);
    const keys = (await app.app.inject({ url: '/.well-known/repo402-keys.json' })).json();
    const verified = specVerify(envelope.json(), keys, f.zips.get('1.1.0')!.bytes);
    expect(verified.ok, JSON.stringify(verified)).toBe(true);

    // The audit log has the yank; the creator's notices have the report and the yank, in words.
    const audit = (await operate(app, 'audit.list', {})) as Json[];
    expect(audit).toEqual([
      {
        id: expect.any(Number),
        at: expect.any(String),
        action: 'release.yank',
        subject: `${name}@1.1.0`,
        reason,
        host: os.hostname(),
      },
    ]);
    const notices = (
      await app.app.inject({ url: '/api/creators/me/notices', headers: bearer(f.creator.apiKey) })
    ).json() as Json;
    expect(notices.notices.map((n: Json) => n.type)).toEqual(['release.yanked', 'report.received']);
    expect(notices.notices[0].text).toContain('withdrew version 1.1.0');
    expect(notices.notices[0].text).not.toMatch(/\/api\/|release_yanked/);
    expect(notices.notices[1].text).toContain('malware');

    // Unyank: served again (the log keeps no mark; the audit log keeps both).
    await operate(app, 'releases.unyank', {
      listing: name,
      version: '1.1.0',
      reason: 'false alarm after review',
    });
    const restored = await app.app.inject({
      url: `${buyUrl(f)}/v/1.1.0`,
      headers: { 'x-wallet-signature': await walletSignatureHeader(app, holder) },
    });
    expect(restored.statusCode, restored.body).toBe(200);
    expect(((await operate(app, 'audit.list', {})) as Json[]).map((e) => e.action)).toEqual([
      'release.yank',
      'release.unyank',
    ]);
  });

  it('refuses to yank what is not there or is yanked already, and the audit log refuses UPDATE and DELETE in the database', {
    timeout: 60_000,
  }, async () => {
    t = await createPaymentsApp({ backend });
    const f = await publishListing(t, { versions: ['1.0.0'] });
    const name = `${f.owner}/${f.slug}`;
    await expect(
      operate(t, 'releases.yank', { listing: name, version: '9.9.9', reason: 'x' }),
    ).rejects.toThrow(/no release 9\.9\.9/);
    await expect(
      operate(t, 'releases.yank', { listing: 'nobody/nothing', version: '1.0.0', reason: 'x' }),
    ).rejects.toThrow(/No listing/);
    expect(() =>
      operations['releases.yank'].args.parse({ listing: name, version: '1.0.0', reason: '  ' }),
    ).toThrow();
    await operate(t, 'releases.yank', { listing: name, version: '1.0.0', reason: 'secret in the zip' });
    await expect(
      operate(t, 'releases.yank', { listing: name, version: '1.0.0', reason: 'again' }),
    ).rejects.toThrow(/not yanked already/);
    // Its only release yanked: nothing is on sale.
    expectError(await t.app.inject({ url: buyUrl(f) }), 404, 'not_found');

    for (const statement of ["update audit_log set reason = 'rewritten'", 'delete from audit_log']) {
      await expect(t.ctx.database.query(statement)).rejects.toThrow(/append-only/);
    }
    for (const statement of ["update domain_events set type = 'x'", 'delete from domain_events']) {
      await expect(t.ctx.database.query(statement)).rejects.toThrow(/append-only/);
    }
    const rows = await t.ctx.database.query<{ reason: string }>('select reason from audit_log');
    expect(rows.rows).toEqual([{ reason: 'secret in the zip' }]);
  });
});
