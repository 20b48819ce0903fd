import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type SshServer, startSshServer } from '../../src/git/ssh-server.js';
import { operations } from '../../src/operations.js';
import { hostedRepoAccess } from '../../src/releases/ssh-access.js';
import { bearer, expectError, signedChallenge } from '../identity/support.js';
import { createHostedListing, type SshKey, sshKeygen } from '../listings/support.js';
import {
  buy,
  buyUrl,
  createPaymentsApp,
  fundedWallet,
  type PaymentsTestApp,
  publishListing,
  walletSignatureHeader,
} from '../purchases/support.js';
import { commitFile, gitOverSsh, workRepo } from '../releases/support.js';
import { BACKENDS } from '../support/db.js';

// biome-ignore lint/suspicious/noExplicitAny: answers are asserted field by field
type Json = Record<string, any>;

async function operate(t: PaymentsTestApp, name: keyof typeof operations, args: Record<string, unknown>) {
  const operation = operations[name];
  return operation.run(t.ctx, operation.args.parse(args) as never);
}

let key: SshKey;
beforeAll(async () => {
  key = await sshKeygen('ed25519');
});

describe.each(BACKENDS)('suspensions on %s', (backend) => {
  let t: PaymentsTestApp | undefined;
  let ssh: SshServer | undefined;
  afterEach(async () => {
    await ssh?.close();
    await t?.close();
    t = ssh = undefined;
  });

  it('a suspended listing sells nothing and its page says why; its holder keeps what it owns; lifting it sells again', {
    timeout: 120_000,
  }, async () => {
    t = await createPaymentsApp({ backend });
    const app = t;
    const f = await publishListing(app, { versions: ['1.0.0'] });
    const name = `${f.owner}/${f.slug}`;
    const holder = await fundedWallet(app, 10_000_000n);
    expect((await buy(app, f, holder)).statusCode).toBe(200);

    const reason = 'a copyright claim is under review';
    expect(await operate(app, 'listings.suspend', { listing: name, reason })).toEqual({
      subject: name,
      suspended: true,
      listings: [name],
    });

    // A new buyer: a clear 403 suspended with the reason, no 402.
    const refused = await app.app.inject({ url: buyUrl(f) });
    expectError(refused, 403, 'suspended');
    expect(refused.json().details).toEqual({ reason });
    const stranger = await fundedWallet(app, 0n);
    expectError(
      await app.app.inject({
        url: buyUrl(f),
        headers: { 'x-wallet-signature': await walletSignatureHeader(app, stranger) },
      }),
      403,
      'suspended',
    );
    // The holder keeps what it owns: the latest (owned) and the re-fetch.
    const sig = async () => ({ 'x-wallet-signature': await walletSignatureHeader(app, holder) });
    expect((await app.app.inject({ url: buyUrl(f), headers: await sig() })).statusCode).toBe(200);
    expect((await app.app.inject({ url: `${buyUrl(f)}/v/1.0.0`, headers: await sig() })).statusCode).toBe(
      200,
    );
    // The page says why, in words; the status says it is not for sale.
    const page = await app.app.inject({ url: `/${name}` });
    expect(page.body).toContain('id="suspended"');
    expect(page.body).toContain(reason);
    expect(page.body).not.toContain('<span class="badge ok">on sale</span>');
    // Nothing on it tells a person or a program how to buy.
    expect(page.body).not.toContain('to see the Buy button');
    expect(page.body).not.toContain('<code>402</code>');
    // A stranger asking for a version is told the listing is suspended, not that it is on sale.
    const asked = await app.app.inject({
      url: `${buyUrl(f)}/v/1.0.0`,
      headers: { 'x-wallet-signature': await walletSignatureHeader(app, stranger) },
    });
    expect(asked.json().message).toContain('is suspended by the operator');
    expect(asked.json().details).toMatchObject({ version: '1.0.0', for_sale: false });
    const status = (await app.app.inject({ url: `/api/v/${name}` })).json() as Json;
    expect(status).toMatchObject({ for_sale: false, suspended: { reason } });
    // Discovery no longer offers it.
    expect((await app.app.inject({ url: '/.well-known/x402' })).body).not.toContain(`/api/r/${name}`);
    // The creator cannot publish or cut it, and is told in the app.
    const sync = await app.app.inject({
      method: 'POST',
      url: `/api/listings/${f.listingId}/sync`,
      headers: bearer(f.creator.apiKey),
    });
    expectError(sync, 403, 'suspended');
    const notices = (
      await app.app.inject({ url: '/api/creators/me/notices', headers: bearer(f.creator.apiKey) })
    ).json() as Json;
    expect(notices.notices[0]).toMatchObject({ type: 'listing.suspended', listing: name });
    expect(notices.notices[0].text).toContain(reason);

    await operate(app, 'listings.unsuspend', { listing: name, reason: 'claim withdrawn' });
    expect((await app.app.inject({ url: buyUrl(f) })).statusCode).toBe(402);
    expect((await app.app.inject({ url: '/.well-known/x402' })).body).toContain(`/api/r/${name}`);
    expect(((await operate(app, 'audit.list', {})) as Json[]).map((e) => [e.action, e.subject])).toEqual([
      ['listing.suspend', name],
      ['listing.unsuspend', name],
    ]);
    await expect(operate(app, 'listings.unsuspend', { listing: name, reason: 'again' })).rejects.toThrow(
      /not suspended/,
    );
  });

  it('a suspended creator cannot push over SSH, sign in, publish or create a listing, and their listings are suspended', {
    timeout: 120_000,
  }, async () => {
    t = await createPaymentsApp({ backend });
    const app = t;
    ssh = await startSshServer(app.ctx, hostedRepoAccess(app.ctx), { port: 0, host: '127.0.0.1' });
    const f = await publishListing(app, { versions: ['1.0.0'] });
    const hosted = await createHostedListing(app, f.creator.apiKey, key.publicKey);
    const remote = `ssh://git@127.0.0.1:${ssh.port}/${hosted.owner}/${hosted.slug}.git`;
    const work = await workRepo();
    await commitFile(work, 'README.md', '# Tool\n', 'First');
    // Before: the push goes through.
    const before = await gitOverSsh(work.dir, key.file, ['push', remote, 'main']);
    expect(before.code, before.stderr).toBe(0);

    const reason = 'repeated malware uploads';
    const result = (await operate(app, 'creators.suspend', { handle: f.creator.handle, reason })) as Json;
    expect(result.listings.sort()).toEqual([`${f.owner}/${f.slug}`, `${hosted.owner}/${hosted.slug}`].sort());

    // The SSH git host refuses the push with a message the client prints.
    await commitFile(work, 'src/index.js', 'export {};\n', 'Second');
    const after = await gitOverSsh(work.dir, key.file, ['push', remote, 'main']);
    expect(after.code).not.toBe(0);
    expect(after.stderr).toContain(`its creator ${f.creator.handle} is suspended`);
    expect(after.stderr).toContain(reason);

    // Sign-in, a new listing and publishing are refused with the reason.
    const signIn = await app.app.inject({
      method: 'POST',
      url: '/api/auth/sessions',
      payload: {
        address: f.creator.wallet.address,
        ...(await signedChallenge(app, f.creator.wallet, 'wallet_ownership')),
      },
    });
    expectError(signIn, 403, 'suspended');
    expect(signIn.json().details.reason).toBe(reason);
    const other = await sshKeygen('ed25519');
    const created = await app.app.inject({
      method: 'POST',
      url: '/api/listings',
      headers: bearer(f.creator.apiKey),
      payload: { source: 'hosted', slug: 'another-one', ssh_public_key: other.publicKey },
    });
    expectError(created, 403, 'suspended');
    const publish = await app.app.inject({
      method: 'POST',
      url: `/api/listings/${hosted.id}/publish`,
      headers: bearer(f.creator.apiKey),
    });
    expectError(publish, 403, 'suspended');
    // Their published listing sells nothing.
    expectError(await app.app.inject({ url: buyUrl(f) }), 403, 'suspended');
    // A listing suspended with its creator is lifted with the creator, not on its own.
    await expect(
      operate(app, 'listings.unsuspend', { listing: `${f.owner}/${f.slug}`, reason: 'x' }),
    ).rejects.toThrow(/creators unsuspend/);

    const events = await app.ctx.database.query<{ type: string; listing: string }>(
      "select type, data->>'listing' as listing from domain_events order by id",
    );
    expect(events.rows.map((e) => e.type).sort()).toEqual([
      'creator.suspended',
      'listing.suspended',
      'listing.suspended',
    ]);
    await operate(app, 'creators.unsuspend', { handle: f.creator.handle, reason: 'appeal upheld' });
    expect((await app.app.inject({ url: buyUrl(f) })).statusCode).toBe(402);
    const pushed = await gitOverSsh(work.dir, key.file, ['push', remote, 'main']);
    expect(pushed.code, pushed.stderr).toBe(0);
    expect(((await operate(app, 'audit.list', {})) as Json[]).map((e) => e.action)).toEqual([
      'creator.suspend',
      'creator.unsuspend',
    ]);
  });
});
