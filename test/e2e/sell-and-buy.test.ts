import { createHash } from 'node:crypto';
import { mkdtemp, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SshServer, startSshServer } from '../../src/git/ssh-server.js';
import { buildArtifact } from '../../src/releases/cut/artifact.js';
import { cutJob } from '../../src/releases/jobs.js';
import { hostedRepoAccess } from '../../src/releases/ssh-access.js';
import { computedParts, findRelease } from '../../src/releases/store.js';
import { bearer, type RegisteredCreator, registerCreator } from '../identity/support.js';
import { createHostedListing, type SshKey, sshKeygen } from '../listings/support.js';
import { createPaymentsApp, fundedWallet, type PaymentsTestApp } from '../purchases/support.js';
import { commitFile, eventually, gitOverSsh, workRepo } from '../releases/support.js';
import { SECRET_SAMPLES } from '../scan/secret-samples.js';
import { freePort } from '../support/process.js';

/**
 * The whole product with nothing stood in: a creator pushes tags over SSH, the real analysis and
 * scan judge each release, the listing is published, and the official x402 client buys it on the
 * devnet chain. A copy of the same code by another creator cannot be published.
 */
describe('sell over SSH, scan, publish, buy with the official client', () => {
  let t: PaymentsTestApp;
  let ssh: SshServer;
  let base: string;
  let alice: RegisteredCreator;
  let aliceKey: SshKey;
  let listing: { id: string; owner: string; slug: string };
  let work: Awaited<ReturnType<typeof workRepo>>;

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await createPaymentsApp({ env: { BASE_URL: base }, jobs: [cutJob] });
    await t.app.listen({ port, host: '127.0.0.1' });
    ssh = await startSshServer(t.ctx, hostedRepoAccess(t.ctx), { port: 0, host: '127.0.0.1' });
    alice = await registerCreator(t);
    aliceKey = await sshKeygen('ed25519');
    listing = await createHostedListing(t, alice.apiKey, aliceKey.publicKey, {
      price_micro: '4000000',
      update_price_micro: '0',
    });
    work = await workRepo();
  });
  afterAll(async () => {
    await ssh?.close();
    await t?.close();
  });

  const remote = (l: { owner: string; slug: string }) =>
    `ssh://git@127.0.0.1:${ssh.port}/${l.owner}/${l.slug}.git`;
  const judged = (listingId: string, version: string) =>
    eventually(async () => {
      const row = await findRelease(t.ctx.database.db, listingId, version);
      return row && row.verdict !== 'pending' ? row : undefined;
    }, 90_000);

  it('cuts, scans and publishes: the clean release passes, the one with a secret fails and is logged', async () => {
    await commitFile(work, 'README.md', '# Release notes\n\nTurns commits into release notes.\n', 'Readme');
    await commitFile(
      work,
      'src/notes.js',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the committed file's own source holds a template literal
      'export function notes(log) {\n  return log.map((c) => `- ${c}`);\n}\n',
      'Code',
    );
    await commitFile(
      work,
      'package.json',
      '{"name":"notes","version":"1.0.0","license":"MIT","dependencies":{}}\n',
      'Manifest',
    );
    await work.git('tag', 'v1.0.0');
    await commitFile(
      work,
      'src/config.js',
      `export const token = '${SECRET_SAMPLES['github-token']!.positive}';\n`,
      'Config',
    );
    await work.git('tag', 'v1.1.0');
    const push = await gitOverSsh(work.dir, aliceKey.file, ['push', remote(listing), 'main', '--tags']);
    expect(push.code, push.stderr).toBe(0);

    const good = await judged(listing.id, '1.0.0');
    const bad = await judged(listing.id, '1.1.0');
    expect(good.verdict).toBe('pass');
    expect(bad.verdict).toBe('fail');
    expect(good.sbomKey).toBeTruthy();

    const patch = await t.app.inject({
      method: 'PATCH',
      url: `/api/listings/${listing.id}`,
      headers: bearer(alice.apiKey),
      payload: { description: 'Release notes from commits', trigger_hint: 'When you cut a release' },
    });
    expect(patch.statusCode, patch.body).toBe(200);
    const publish = await t.app.inject({
      method: 'POST',
      url: `/api/listings/${listing.id}/publish`,
      headers: bearer(alice.apiKey),
    });
    expect(publish.statusCode, publish.body).toBe(200);

    // The creator sees the full report, with the secret's path and line, on the single-listing route only.
    const mine = (
      await t.app.inject({ url: `/api/listings/${listing.id}`, headers: bearer(alice.apiKey) })
    ).json();
    expect(mine.latest_release.version).toBe('1.0.0');
    // No licence was committed through the service: the listing states the one the analysis found.
    expect(mine.licence).toBe('MIT');
    expect(mine.newest_release.version).toBe('1.1.0');
    const secret = mine.newest_release.scan_report.findings.find(
      (f: { check: string }) => f.check === 'secrets',
    );
    expect(secret).toMatchObject({
      tier: 'blocking',
      rule_id: 'github-token',
      path: 'src/config.js',
      line: 1,
    });
    const list = (await t.app.inject({ url: '/api/listings', headers: bearer(alice.apiKey) })).json();
    expect(JSON.stringify(list)).not.toContain('scan_report');

    // The public log keeps the failing release; the manifest sells the passing one and hides where the secret was.
    const log = (await t.app.inject({ url: `/api/v/${listing.owner}/${listing.slug}/releases` })).json();
    expect(log.releases.map((r: { version: string; scan: string }) => [r.version, r.scan])).toEqual([
      ['1.1.0', 'fail'],
      ['1.0.0', 'pass'],
    ]);
    const manifest = (await t.app.inject({ url: `/api/label/${listing.owner}/${listing.slug}` })).json();
    expect(manifest).toMatchObject({ version: '1.0.0', price_micro: '4000000' });
    expect(manifest.computed.file_count).toBe(3);
    expect(manifest.computed.tree.map((f: { path: string }) => f.path).sort()).toEqual([
      'README.md',
      'package.json',
      'src/notes.js',
    ]);
    expect(manifest.computed.scan.verdict).toBe('pass');
    expect(manifest.computed.readme_html).toContain('Release notes');
    // A hosted listing's hosting metadata comes from repo402's own records; what it has no record of is null.
    expect(manifest.computed.repo_meta).toMatchObject({
      repo_id: null,
      full_name: `${listing.owner}/${listing.slug}`,
      default_branch: 'main',
      private: true,
      stars: null,
      topics: null,
      html_url: `${base}/${listing.owner}/${listing.slug}`,
    });
    expect(manifest.computed.owner).toMatchObject({ login: listing.owner, name: null, avatar_url: null });
    expect(manifest.computed.owner.created_at).toMatch(/^\d{4}-/);
  });

  it('sells the passing release to the official x402 client; the zip is the tagged tree', async () => {
    const buyer = await fundedWallet(t, 10_000_000n);
    const client = new x402Client()
      .register('eip155:*', new ExactEvmScheme(buyer))
      .setSpendControls({ maxAmountPerPayment: '$5' } as never);
    const response = await wrapFetchWithPayment(
      fetch,
      client,
    )(`${base}/api/r/${listing.owner}/${listing.slug}`);
    expect(response.status, await response.clone().text()).toBe(200);
    const grant = (await response.json()) as {
      download_url: string;
      artifact_sha256: string;
      version: string;
    };
    expect(grant.version).toBe('1.0.0');
    const zip = Buffer.from(await (await fetch(grant.download_url)).arrayBuffer());
    expect(createHash('sha256').update(zip).digest('hex')).toBe(grant.artifact_sha256);
    // Identical trees give identical zips: the one built from the creator's own clone.
    const expected = path.join(await mkdtemp(path.join(os.tmpdir(), 'repo402-zip-')), 'expected.zip');
    await buildArtifact({
      gitDir: path.join(work.dir, '.git'),
      commit: 'v1.0.0',
      prefix: `${listing.slug}/`,
      outFile: expected,
    });
    expect(zip.equals(await readFile(expected))).toBe(true);
    expect(await t.rail.devnet!.balanceOf(buyer.address)).toBe(6_000_000n);
  });

  it("refuses to publish another creator's copy of the same code: derivative_of", async () => {
    // Later than Alice's release: originality favours whoever recorded the code first.
    t.clock.advance(60_000);
    const mallory = await registerCreator(t);
    const malloryKey = await sshKeygen('ed25519');
    const copy = await createHostedListing(t, mallory.apiKey, malloryKey.publicKey, {
      price_micro: '1000000',
    });
    const push = await gitOverSsh(work.dir, malloryKey.file, [
      'push',
      remote(copy),
      'v1.0.0:refs/heads/main',
      'v1.0.0',
    ]);
    expect(push.code, push.stderr).toBe(0);
    const release = await judged(copy.id, '1.0.0');
    expect(release.verdict).toBe('pass');
    const originality = (await computedParts(t.ctx.database.db, [release.id], 'originality')).get(release.id);
    expect((originality as { derivative_of: string }).derivative_of).toBe(`${listing.owner}/${listing.slug}`);
    await t.app.inject({
      method: 'PATCH',
      url: `/api/listings/${copy.id}`,
      headers: bearer(mallory.apiKey),
      payload: { description: 'Mine now', trigger_hint: 'Always' },
    });
    const publish = await t.app.inject({
      method: 'POST',
      url: `/api/listings/${copy.id}/publish`,
      headers: bearer(mallory.apiKey),
    });
    expect(publish.statusCode).toBe(409);
    expect(publish.json().code).toBe('derivative_of');
  });
});
