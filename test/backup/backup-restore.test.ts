import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { create as createTar, extract } from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyFiles } from '../../src/attestations/verify-files.js';
import { migrationJournal } from '../../src/db/migrate.js';
import { encodeWalletSignature } from '../../src/identity/wallet-signature.js';
import { newWallet } from '../identity/support.js';
import { signPayment } from '../purchases/support.js';
import { commitFile, eventually, gitOverSsh, workRepo } from '../releases/support.js';
import { BACKENDS, openTestDatabase } from '../support/db.js';
import { runCli, type ServerProcess, startServerProcess } from '../support/process.js';
import { api, publishHostedListing, registerCreator, type SeededCreator } from '../support/seed-over-http.js';

const exec = promisify(execFile);

interface ListingView {
  remote: string;
  host_key_fingerprints: { type: string; sha256: string }[];
  latest_release: { version: string } | null;
}

const NEWEST_MIGRATION = migrationJournal().at(-1)!.tag;

/** The served SSH host keys' fingerprints, as a creator's first connection shows them. */
async function servedFingerprints(remote: string): Promise<string[]> {
  const port = new URL(remote).port;
  const { stdout } = await exec('sh', [
    '-c',
    `ssh-keyscan -p ${port} 127.0.0.1 2>/dev/null | ssh-keygen -lf -`,
  ]);
  return stdout
    .trim()
    .split('\n')
    .map((line) => line.split(' ')[1]!)
    .sort();
}

async function walletHeader(url: string, wallet: ReturnType<typeof newWallet>): Promise<string> {
  const challenge = await api<{ nonce: string; message: string }>(
    url,
    'GET',
    `/api/auth/challenge?address=${wallet.address}&purpose=wallet_ownership`,
    200,
  );
  const signature = await wallet.signMessage({ message: challenge.message });
  return encodeWalletSignature({ address: wallet.address, nonce: challenge.nonce, signature });
}

/**
 * `repo402 backup` of a running server that has sold a release, `repo402 restore` into a fresh
 * DATA_DIR, and a server started on it: everything a buyer and a creator held on to still holds.
 */
describe('backup and restore of a running server', { timeout: 240_000 }, () => {
  let root: string;
  let original: ServerProcess | undefined;
  let restored: ServerProcess | undefined;
  let creator: SeededCreator;
  let listing: { id: string; owner: string; slug: string };
  let work: Awaited<ReturnType<typeof workRepo>>;
  const buyer = newWallet();
  let archive: string;
  let before: { fingerprints: string[]; served: string[]; keyids: string[]; artifact: string };

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'repo402-backup-'));
    const dataDir = path.join(root, 'data');
    original = await startServerProcess({ DATA_DIR: dataDir, LOG_LEVEL: 'warn' });
    const target = { url: original.url, cliEnv: { DATA_DIR: dataDir } };
    creator = await registerCreator(target, `keeper-${Date.now().toString(36)}`);
    work = await workRepo();
    await commitFile(work, 'README.md', '# Keeper\n\nKeeps things.\n', 'Readme');
    await commitFile(work, 'src/keep.js', 'export const keep = (x) => x;\n', 'Code');
    await work.git('tag', 'v1.0.0');
    listing = await publishHostedListing(original, creator, {
      slug: 'keeper',
      priceMicro: '1500000',
      gitDir: work.dir,
      version: '1.0.0',
    });

    // A sale on the server's devnet chain, paid with the official client's scheme.
    const fund = await runCli(['devnet', 'fund', buyer.address, '5000000'], { DATA_DIR: dataDir });
    expect(fund.code, fund.stderr).toBe(0);
    const resource = `${original.url}/api/r/${listing.owner}/${listing.slug}`;
    const required = await (await fetch(resource)).json();
    const paid = await fetch(resource, {
      headers: {
        'payment-signature': await signPayment(required, buyer),
        'x-quote-id': required.extra.quote_id,
      },
    });
    expect(paid.status, await paid.clone().text()).toBe(200);

    const view = await api<ListingView>(original.url, 'GET', `/api/listings/${listing.id}`, 200, {
      apiKey: creator.apiKey,
    });
    const keys = await api<{ keys: { keyid: string }[] }>(
      original.url,
      'GET',
      '/.well-known/repo402-keys.json',
      200,
    );
    const label = await api<{ artifact_sha256: string }>(
      original.url,
      'GET',
      `/api/label/${listing.owner}/${listing.slug}`,
      200,
    );
    before = {
      fingerprints: view.host_key_fingerprints.map((k) => k.sha256).sort(),
      served: await servedFingerprints(view.remote),
      keyids: keys.keys.map((k) => k.keyid),
      artifact: label.artifact_sha256,
    };

    archive = path.join(root, 'backup.tar.gz');
    const backup = await runCli(['backup', archive], { DATA_DIR: dataDir });
    expect(backup.code, backup.stderr).toBe(0);
    expect(backup.stdout).toContain(`database: embedded (PGlite), migrated to ${NEWEST_MIGRATION}`);
    expect(backup.stdout).toContain('repositories: 1');
    expect(backup.stdout).toMatch(
      /secrets: app-secret; attestation-key; ssh host keys \(ssh_host_ecdsa_key, ssh_host_ed25519_key\)/,
    );
    // The original server answered throughout: the backup went through its control socket.
    expect((await fetch(`${original.url}/api/health`)).status).toBe(200);
    await original.stop();
    original = undefined;

    const restore = await runCli(['restore', archive], { DATA_DIR: path.join(root, 'restored') });
    expect(restore.code, restore.stderr).toBe(0);
    expect(restore.stdout).toContain(`restored into ${path.join(root, 'restored')}`);
    expect(restore.stdout).toContain('repositories: 1');
    restored = await startServerProcess({ DATA_DIR: path.join(root, 'restored'), LOG_LEVEL: 'warn' });
    // Two servers started, a release cut, a sale, a backup and a restore: over a minute on a busy machine.
  }, 180_000);
  afterAll(async () => {
    await original?.stop('SIGKILL');
    await restored?.stop('SIGKILL');
    await rm(root, { recursive: true, force: true });
    if (work) await rm(work.dir, { recursive: true, force: true });
  });

  it('writes one archive readable by its owner only, holding a manifest of checksums first', async () => {
    expect((await stat(archive)).mode & 0o777).toBe(0o600);
    const members: string[] = [];
    await import('tar').then(({ list }) =>
      list({ file: archive, onReadEntry: (entry) => members.push(entry.path) }),
    );
    expect(members[0]).toBe('manifest.json');
    expect(members).toEqual(
      expect.arrayContaining([
        'database/pglite.tar',
        'app-secret',
        'attestation-key',
        'ssh/ssh_host_ed25519_key',
        `repos/${listing.owner}/${listing.slug}.git/HEAD`,
      ]),
    );
    expect(members.some((m) => m.startsWith('blobs/'))).toBe(true);
    // What a running server keeps for itself alone is not in it.
    expect(members.some((m) => /^(run|db\.lock|git-hooks|tmp)\b/.test(m))).toBe(false);
  });

  it('the holder re-fetches the version it bought, free, and gets the same bytes', async () => {
    const url = restored!.url;
    const res = await fetch(`${url}/api/r/${listing.owner}/${listing.slug}/v/1.0.0`, {
      headers: { 'x-wallet-signature': await walletHeader(url, buyer) },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const grant = (await res.json()) as { download_url: string; kind: string };
    expect(grant.kind).toBe('owned');
    const zip = Buffer.from(await (await fetch(grant.download_url)).arrayBuffer());
    expect(createHash('sha256').update(zip).digest('hex')).toBe(before.artifact);
  });

  it('the attestation verifies with the same key id', async () => {
    const url = restored!.url;
    const keys = await api<{ keys: { keyid: string }[] }>(url, 'GET', '/.well-known/repo402-keys.json', 200);
    expect(keys.keys.map((k) => k.keyid)).toEqual(before.keyids);
    const dir = await mkdtemp(path.join(root, 'verify-'));
    const attestation = await (
      await fetch(`${url}/api/v/${listing.owner}/${listing.slug}/releases/1.0.0/attestation`)
    ).text();
    const res = await fetch(`${url}/api/r/${listing.owner}/${listing.slug}/v/1.0.0`, {
      headers: { 'x-wallet-signature': await walletHeader(url, buyer) },
    });
    const zip = Buffer.from(await (await fetch((await res.json()).download_url)).arrayBuffer());
    await writeFile(path.join(dir, 'a.zip'), zip);
    await writeFile(path.join(dir, 'attestation.json'), attestation);
    await writeFile(path.join(dir, 'keys.json'), JSON.stringify(keys));
    const result = await verifyFiles(path.join(dir, 'a.zip'), path.join(dir, 'attestation.json'), {
      expect: { owner: listing.owner, slug: listing.slug, version: '1.0.0' },
      key: path.join(dir, 'keys.json'),
    });
    expect(result.verification).toMatchObject({ ok: true, keyid: before.keyids[0] });
  });

  it('the SSH host key fingerprints are unchanged, shown and served', async () => {
    const view = await api<ListingView>(restored!.url, 'GET', `/api/listings/${listing.id}`, 200, {
      apiKey: creator.apiKey,
    });
    expect(view.host_key_fingerprints.map((k) => k.sha256).sort()).toEqual(before.fingerprints);
    expect(await servedFingerprints(view.remote)).toEqual(before.served);
  });

  it('the creator pushes a new tag and it is cut', async () => {
    const view = await api<ListingView>(restored!.url, 'GET', `/api/listings/${listing.id}`, 200, {
      apiKey: creator.apiKey,
    });
    await commitFile(work, 'src/more.js', 'export const more = 1;\n', 'More');
    await work.git('tag', 'v1.1.0');
    const push = await gitOverSsh(work.dir, creator.key.file, ['push', view.remote, 'main', '--tags']);
    expect(push.code, push.stderr).toBe(0);
    const cut = await eventually(async () => {
      const now = await api<ListingView>(restored!.url, 'GET', `/api/listings/${listing.id}`, 200, {
        apiKey: creator.apiKey,
      });
      return now.latest_release?.version === '1.1.0' ? now : undefined;
    }, 120_000);
    expect(cut.latest_release?.version).toBe('1.1.0');
  });

  it('the restored server reconciled its database against the chain before its jobs ran, and reconcile runs on demand', async () => {
    const dataDir = path.join(root, 'restored');
    const record = JSON.parse(await readFile(path.join(dataDir, 'restored-from.json'), 'utf8'));
    // On the devnet the chain's journal is in the database, so the backup holds the chain too.
    expect(record.chain_reconciled.sales).toEqual({ known: 1, recovered: 0, unattributed: 0, not_sales: 0 });
    const manual = await runCli(['reconcile', '--since', record.created_at], { DATA_DIR: dataDir });
    expect(manual.code, manual.stderr).toBe(0);
    expect(JSON.parse(manual.stdout)).toMatchObject({
      sales: { known: 1, recovered: 0 },
      payouts: { recovered: 0 },
    });
  });

  describe('refusals', () => {
    it('reconcile refuses a time it cannot read, one in the future, and none', async () => {
      const env = { DATA_DIR: path.join(root, 'restored') };
      const words = await runCli(['reconcile', '--since', 'yesterday'], env);
      expect(words.code).not.toBe(0);
      expect(words.stderr).toContain('expected an ISO 8601 time');
      const future = await runCli(['reconcile', '--since', '2999-01-01T00:00:00Z'], env);
      expect(future.code).not.toBe(0);
      expect(future.stderr).toContain('expected a time in the past');
      const none = await runCli(['reconcile'], env);
      expect(none.code).not.toBe(0);
      expect(none.stderr).toContain("required option '--since <time>'");
    });

    const restoreInto = (dataDir: string, file: string) => runCli(['restore', file], { DATA_DIR: dataDir });

    it('refuses a DATA_DIR that is not empty, and touches nothing in it', async () => {
      const dataDir = path.join(root, 'restored');
      const entries = await readdir(dataDir);
      const result = await restoreInto(dataDir, archive);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`DATA_DIR=${dataDir} is not empty`);
      expect(result.stderr).toContain('a restore writes only into an empty directory');
      expect(await readdir(dataDir)).toEqual(entries);
    });

    it('refuses an archive whose file does not match its checksum, leaving nothing behind', async () => {
      const unpacked = await mkdtemp(path.join(root, 'unpacked-'));
      await extract({ file: archive, cwd: unpacked });
      await writeFile(path.join(unpacked, 'attestation-key'), 'f'.repeat(64));
      const tampered = path.join(root, 'tampered.tar.gz');
      const members = (await readdir(unpacked, { recursive: true, withFileTypes: true }))
        .filter((e) => e.isFile())
        .map((e) => path.relative(unpacked, path.join(e.parentPath, e.name)));
      await createTar({ gzip: true, cwd: unpacked, file: tampered }, members);
      const dataDir = path.join(root, 'from-tampered');
      const result = await restoreInto(dataDir, tampered);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(
        'is damaged: attestation-key does not match its checksum; nothing was restored',
      );
      await expect(stat(dataDir)).rejects.toThrow();
      expect((await readdir(root)).filter((n) => n.includes('.restoring-'))).toEqual([]);
    });

    it('refuses a truncated archive', async () => {
      const truncated = path.join(root, 'truncated.tar.gz');
      const bytes = await readFile(archive);
      await writeFile(truncated, bytes.subarray(0, Math.floor(bytes.length / 2)));
      const result = await restoreInto(path.join(root, 'from-truncated'), truncated);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/is not a repo402 backup|is damaged/);
    });

    it('refuses a file that is not a backup: a text file, a tar without a manifest, a missing file', async () => {
      const text = path.join(root, 'notes.txt');
      await writeFile(text, 'not an archive\n');
      const notText = await restoreInto(path.join(root, 'from-text'), text);
      expect(notText.code).toBe(1);
      expect(notText.stderr).toContain(`${text} is not a repo402 backup`);

      const other = await mkdtemp(path.join(root, 'other-'));
      await mkdir(path.join(other, 'stuff'));
      await writeFile(path.join(other, 'stuff', 'a.txt'), 'a');
      const foreign = path.join(root, 'foreign.tar.gz');
      await createTar({ gzip: true, cwd: other, file: foreign }, ['stuff']);
      const noManifest = await restoreInto(path.join(root, 'from-foreign'), foreign);
      expect(noManifest.code).toBe(1);
      expect(noManifest.stderr).toContain(`${foreign} is not a repo402 backup: it has no manifest.json`);

      const missing = await restoreInto(path.join(root, 'from-missing'), path.join(root, 'nope.tar.gz'));
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain('nope.tar.gz: no such file');
    });

    it('refuses to restore an embedded database where DATABASE_URL points elsewhere', async () => {
      const dataDir = path.join(root, 'to-postgres');
      const result = await runCli(['restore', archive], {
        DATA_DIR: dataDir,
        DATABASE_URL: 'postgres://repo402@127.0.0.1:1/none',
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('holds an embedded (PGlite) database but DATABASE_URL is set');
      await expect(stat(dataDir)).rejects.toThrow();
    });

    it.runIf(BACKENDS.includes('postgres'))(
      'on PostgreSQL, archives the rest and says to take the database with pg_dump',
      async () => {
        const database = await openTestDatabase('postgres');
        try {
          const dataDir = path.join(root, 'pg-data');
          await cp(path.join(root, 'restored', 'ssh'), path.join(dataDir, 'ssh'), { recursive: true });
          const file = path.join(root, 'pg.tar.gz');
          const backup = await runCli(['backup', file], { DATA_DIR: dataDir, DATABASE_URL: database.url! });
          expect(backup.code, backup.stderr).toBe(0);
          expect(backup.stdout).toContain(
            `database: PostgreSQL (migrated to ${NEWEST_MIGRATION}), not in this archive`,
          );
          expect(backup.stderr).toContain('take it with pg_dump');
          const restore = await runCli(['restore', file], { DATA_DIR: path.join(root, 'pg-restored') });
          expect(restore.code, restore.stderr).toBe(0);
          expect(restore.stdout).toContain('database: PostgreSQL');
          expect((await readdir(path.join(root, 'pg-restored'))).sort()).toEqual([
            'app-secret',
            'restored-from.json',
            'ssh',
          ]);
        } finally {
          await database.close();
        }
      },
    );

    it('a backup never overwrites a file, and needs a database to back up', async () => {
      const existing = await runCli(['backup', archive], { DATA_DIR: path.join(root, 'restored') });
      expect(existing.code).toBe(1);
      expect(existing.stderr).toContain(`${archive} exists already`);
      const empty = path.join(root, 'empty');
      await cp(path.join(root, 'restored', 'ssh'), path.join(empty, 'ssh'), { recursive: true });
      const nothing = await runCli(['backup', path.join(root, 'x.tar.gz')], { DATA_DIR: empty });
      expect(nothing.code).toBe(1);
      expect(nothing.stderr).toContain(`No database in DATA_DIR=${empty}`);
    });
  });
});
