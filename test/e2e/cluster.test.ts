import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeWalletSignature } from '../../src/identity/wallet-signature.js';
import { eventually, gitOverSsh, workRepo } from '../releases/support.js';
import { type Cluster, killGitHostMidCut, startCluster } from '../support/cluster.js';
import { balanced, reconcileCluster, reconciliationLine } from '../support/cluster-reconcile.js';
import { codeBlocks } from '../support/code-blocks.js';
import { runCli } from '../support/process.js';
import {
  api,
  publishHostedListing,
  registerCreator,
  type SeededCreator,
  type SeededListing,
} from '../support/seed-over-http.js';

/**
 * The stateless API tier for real (docs/OPERATIONS.md, "Scaling out"): two `repo402 serve`
 * processes with GIT_HOST_URL and no local state behind a round-robin proxy, one `repo402 git-host`
 * (SSH, the repositories, the cuts), one `repo402 worker`, PostgreSQL, a Redis and an S3 API server
 * of the run's own, and `repo402 devnet serve` as Base, reached in mainnet mode. One creator lists
 * and pushes, buyers pay with the official x402 client and re-fetch, an API process is killed, and
 * the books are reconciled against the chain and the bucket.
 */
const exec = promisify(execFile);
const ADMIN_URL = process.env.TEST_DATABASE_URL;

describe.skipIf(!ADMIN_URL)('a stateless API tier with a git host, a worker and a shared devnet', () => {
  let cluster: Cluster;
  let creator: SeededCreator;
  let listing: SeededListing;
  const cliEnv = () => ({ ...cluster.env, DATA_DIR: path.join(cluster.root, 'cli') });

  beforeAll(async () => {
    cluster = await startCluster({
      postgresAdminUrl: ADMIN_URL!,
      apis: 2,
      built: false,
      env: {
        RATE_LIMIT_PUBLIC: '100000/60',
        RATE_LIMIT_AUTH: '100000/60',
        RATE_LIMIT_CREATOR: '100000/60',
        // Deep enough for the product below, shallow enough to refuse the `deep` branch.
        TREE_MAX_DEPTH: '3',
      },
    });
    creator = await registerCreator({ url: cluster.url, cliEnv: cliEnv() }, 'cluster-seller');
    const repo = await workRepo();
    await mkdir(path.join(repo.dir, 'src'), { recursive: true });
    await writeFile(path.join(repo.dir, 'README.md'), '# cluster kit\n\nSold through a stateless tier.\n');
    await writeFile(path.join(repo.dir, 'src/index.ts'), 'export const answer = 42;\n');
    await repo.git('add', '-A');
    await repo.git('commit', '-q', '-m', 'First release');
    await repo.git('tag', 'v1.0.0');
    listing = await publishHostedListing({ url: cluster.url }, creator, {
      slug: 'cluster-kit',
      priceMicro: '1000000',
      gitDir: repo.dir,
      version: '1.0.0',
    });
    await rm(repo.dir, { recursive: true, force: true });
  }, 300_000);

  afterAll(async () => {
    await cluster?.stop();
    if (creator) await rm(path.dirname(creator.key.file), { recursive: true, force: true });
  });

  async function fundedBuyer() {
    const account = privateKeyToAccount(generatePrivateKey());
    const funded = await runCli(['devnet', 'fund', account.address, '1000000'], cluster.devnetEnv);
    expect(funded.code, funded.stderr).toBe(0);
    const client = new x402Client().register('eip155:*', new ExactEvmScheme(account)).setSpendControls(false);
    return { account, fetch: wrapFetchWithPayment(fetch, client) };
  }

  async function walletSignature(account: ReturnType<typeof privateKeyToAccount>) {
    const challenge = await api<{ nonce: string; message: string }>(
      cluster.url,
      'GET',
      `/api/auth/challenge?address=${account.address}&purpose=wallet_ownership`,
      200,
    );
    const signature = await account.signMessage({ message: challenge.message });
    return encodeWalletSignature({ address: account.address, nonce: challenge.nonce, signature });
  }

  it('serves the shared devnet as Base: chain 8453 over JSON-RPC, a facilitator for that network only', async () => {
    const rpc = await fetch(cluster.rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
    });
    expect(((await rpc.json()) as { result: string }).result).toBe('0x2105');
    const supported = (await (
      await fetch(cluster.rpcUrl.replace(/\/rpc$/, '/facilitator/supported'))
    ).json()) as {
      kinds: Array<{ network: string }>;
    };
    expect(supported.kinds.length).toBeGreaterThan(0);
    expect(new Set(supported.kinds.map((kind) => kind.network))).toEqual(new Set(['eip155:8453']));
  });

  it('keeps the repositories on the git host only, and the zips in the bucket', () => {
    expect(
      existsSync(path.join(cluster.root, 'git-host', 'repos', 'cluster-seller', 'cluster-kit.git')),
    ).toBe(true);
    for (const name of ['api-1', 'api-2', 'worker']) {
      expect(existsSync(path.join(cluster.root, name, 'repos'))).toBe(false);
      expect(existsSync(path.join(cluster.root, name, 'blobs'))).toBe(false);
    }
  });

  it("tells creators the git host's host keys from every API process and the guide; a push pinned to them passes strict checking", async () => {
    const scan = await exec('sh', [
      '-c',
      `ssh-keyscan -p ${cluster.env.SSH_PORT} 127.0.0.1 2>/dev/null | ssh-keygen -lf -`,
    ]);
    const presented = scan.stdout
      .trim()
      .split('\n')
      .map((line) => line.split(' ')[1])
      .sort();
    expect(presented).toHaveLength(2);
    for (const server of cluster.apis) {
      const answer = await api<{ host_key_fingerprints: Array<{ sha256: string }> }>(
        server.url!,
        'GET',
        `/api/listings/${listing.id}`,
        200,
        { apiKey: creator.apiKey },
      );
      expect(answer.host_key_fingerprints.map((key) => key.sha256).sort(), server.name).toEqual(presented);
      const guide = await (await fetch(`${server.url}/docs/selling`)).text();
      const listed = [...guide.matchAll(/<td><code>(SHA256:[A-Za-z0-9+/]+)<\/code><\/td>/g)]
        .map((m) => m[1])
        .sort();
      expect(listed, server.name).toEqual(presented);
      // An API process keeps no host keys of its own to disagree with.
      expect(existsSync(path.join(cluster.root, server.name, 'ssh')), server.name).toBe(false);
    }

    // The guide's known_hosts lines, added as shown, then a push that checks the host strictly.
    const guide = await (await fetch(`${cluster.apis[1]!.url}/docs/selling`)).text();
    const pin = codeBlocks(guide, 'sh').find((block) => block.includes('>> ~/.ssh/known_hosts'))!;
    const home = await mkdtemp(path.join(os.tmpdir(), 'repo402-pinned-'));
    await exec('sh', ['-c', pin], { env: { PATH: process.env.PATH, HOME: home } });
    const work = await workRepo();
    const remote = `ssh://git@127.0.0.1:${cluster.env.SSH_PORT}/${listing.owner}/${listing.slug}.git`;
    const strict = (args: string[]) =>
      exec('git', args, {
        cwd: work.dir,
        env: {
          PATH: process.env.PATH,
          HOME: work.dir,
          GIT_AUTHOR_NAME: 'Creator',
          GIT_AUTHOR_EMAIL: 'creator@example.com',
          GIT_COMMITTER_NAME: 'Creator',
          GIT_COMMITTER_EMAIL: 'creator@example.com',
          GIT_SSH_COMMAND: `ssh -i ${creator.key.file} -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=yes -o UserKnownHostsFile=${path.join(home, '.ssh', 'known_hosts')}`,
        },
      });
    await strict(['pull', '-q', remote, 'main']);
    await writeFile(path.join(work.dir, 'pinned.txt'), 'pushed with the host pinned\n');
    await strict(['add', '-A']);
    await strict(['commit', '-q', '-m', 'pinned']);
    await strict(['push', '-q', remote, 'HEAD:refs/heads/pinned']);
    await rm(work.dir, { recursive: true, force: true });
    await rm(home, { recursive: true, force: true });
  });

  it('sells with the official client through either API process, and re-fetches for free', async () => {
    const buyer = await fundedBuyer();
    const paid = await buyer.fetch(`${cluster.url}/api/r/${listing.owner}/${listing.slug}`);
    expect(paid.status, await paid.clone().text()).toBe(200);
    const grant = (await paid.json()) as { download_url: string; version: string };
    expect(grant.version).toBe('1.0.0');
    const zip = await fetch(grant.download_url);
    expect(zip.status).toBe(200);
    expect((await zip.arrayBuffer()).byteLength).toBeGreaterThan(100);

    // Round robin: consecutive re-fetches land on both API processes.
    for (let i = 0; i < 2; i++) {
      const again = await fetch(`${cluster.url}/api/r/${listing.owner}/${listing.slug}/v/1.0.0`, {
        headers: { 'x-wallet-signature': await walletSignature(buyer.account) },
      });
      expect(again.status, await again.clone().text()).toBe(200);
    }
  });

  it('commits a licence and refuses a tree over the limits through the git host', async () => {
    const committed = await api<{ commit_sha: string }>(
      cluster.url,
      'POST',
      `/api/listings/${listing.id}/licence`,
      200,
      {
        apiKey: creator.apiKey,
        body: { spdx: 'MIT' },
      },
    );
    expect(committed.commit_sha).toMatch(/^[0-9a-f]{40}$/);

    // A branch nested past TREE_MAX_DEPTH: the walk runs on the git host, its 413 reaches the creator.
    const deep = await workRepo();
    const remote = `ssh://git@127.0.0.1:${cluster.env.SSH_PORT}/${listing.owner}/${listing.slug}.git`;
    const fetched = await gitOverSsh(deep.dir, creator.key.file, ['pull', '-q', remote, 'main']);
    expect(fetched.code, fetched.stderr).toBe(0);
    await mkdir(path.join(deep.dir, 'a/b/c/d/e'), { recursive: true });
    await writeFile(path.join(deep.dir, 'a/b/c/d/e/deep.txt'), 'deep\n');
    await deep.git('add', '-A');
    await deep.git('commit', '-q', '-m', 'deep');
    const pushed = await gitOverSsh(deep.dir, creator.key.file, [
      'push',
      '-q',
      remote,
      'HEAD:refs/heads/deep',
    ]);
    expect(pushed.code, pushed.stderr).toBe(0);
    const refused = await fetch(`${cluster.url}/api/listings/${listing.id}/sync`, {
      method: 'POST',
      headers: { authorization: `Bearer ${creator.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ref: 'deep', version: '2.0.0' }),
    });
    expect(refused.status).toBe(413);
    expect(((await refused.json()) as { code: string }).code).toBe('repo_too_large');
    await rm(deep.dir, { recursive: true, force: true });
  });

  it('finishes a cut the git host was killed in the middle of, once it is back', async () => {
    const work = await workRepo();
    const remote = `ssh://git@127.0.0.1:${cluster.env.SSH_PORT}/${listing.owner}/${listing.slug}.git`;
    const pulled = await gitOverSsh(work.dir, creator.key.file, ['pull', '-q', remote, 'main']);
    expect(pulled.code, pulled.stderr).toBe(0);
    // Enough files that the cut's analysis takes a moment to kill it in.
    for (let i = 0; i < 300; i++) {
      await writeFile(
        path.join(work.dir, `src/module-${i}.ts`),
        `export const value${i} = ${i};\n`.repeat(40),
      );
    }
    await work.git('add', '-A');
    await work.git('commit', '-q', '-m', 'Second release');
    await work.git('tag', 'v1.1.0');
    const killed = killGitHostMidCut(cluster);
    const pushed = await gitOverSsh(work.dir, creator.key.file, ['push', '-q', remote, 'main', 'v1.1.0']);
    expect(pushed.code, pushed.stderr).toBe(0);
    expect(await killed).toBe(true);
    const deadline = Date.now() + 120_000;
    let latest: string | undefined;
    while (latest !== '1.1.0' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      const view = await api<{ latest_release: { version: string } | null }>(
        cluster.url,
        'GET',
        `/api/listings/${listing.id}`,
        200,
        { apiKey: creator.apiKey },
      );
      latest = view.latest_release?.version;
    }
    expect(latest).toBe('1.1.0');
    expect(cluster.gitHost.logs()).toContain('jobs left running by a previous run are retried');
    await rm(work.dir, { recursive: true, force: true });
  }, 180_000);

  it('answers the repository operations only to a holder of the installation secret', async () => {
    for (const authorization of [undefined, 'Bearer wrong', `Bearer ${cluster.env.APP_SECRET}`]) {
      const res = await fetch(`${cluster.env.GIT_HOST_URL}/ops/repos.tags`, {
        method: 'POST',
        headers: authorization ? { authorization } : {},
        body: JSON.stringify({ owner: listing.owner, slug: listing.slug }),
      });
      expect(res.status).toBe(401);
    }
  });

  it("suspends a listing through the git host's control socket and lifts it from a CLI with no server: every API process and the SSH host follow", async () => {
    const name = `${listing.owner}/${listing.slug}`;
    const viaGitHost = { ...cluster.env, DATA_DIR: path.join(cluster.root, 'git-host') };
    const suspended = await runCli(['listings', 'suspend', name, '--reason', 'takedown request'], viaGitHost);
    expect(suspended.code, suspended.stderr).toBe(0);
    // Each API process drops its cached sale head (NOTIFY, or its 1-second life): both refuse.
    for (let i = 0; i < 2; i++) {
      const refused = await eventually(async () => {
        const res = await fetch(`${cluster.url}/api/r/${name}`);
        return res.status === 403 ? res : undefined;
      });
      expect(await refused.json()).toMatchObject({
        code: 'suspended',
        details: { reason: 'takedown request' },
      });
    }
    const { remote } = await api<{ remote: string }>(cluster.url, 'GET', `/api/listings/${listing.id}`, 200, {
      apiKey: creator.apiKey,
    });
    const work = await workRepo();
    await writeFile(path.join(work.dir, 'README.md'), '# more\n');
    await work.git('add', '-A');
    await work.git('commit', '-q', '-m', 'more');
    const push = await gitOverSsh(work.dir, creator.key.file, ['push', remote, 'main']);
    expect(push.code).not.toBe(0);
    expect(push.stderr).toContain('this listing is suspended');
    await rm(work.dir, { recursive: true, force: true });

    // No process answers on the CLI's own DATA_DIR: it runs the command itself against PostgreSQL.
    const lifted = await runCli(['listings', 'unsuspend', name, '--reason', 'request withdrawn'], cliEnv());
    expect(lifted.code, lifted.stderr).toBe(0);
    for (let i = 0; i < 2; i++) {
      await eventually(async () =>
        (await fetch(`${cluster.url}/api/r/${name}`)).status === 402 ? true : undefined,
      );
    }
    const audit = await runCli(['audit'], cliEnv());
    expect(
      audit.stdout
        .trim()
        .split('\n')
        .map((line) => line.split('\t')[2]),
    ).toEqual(['listing.suspend', 'listing.unsuspend']);
  });

  it('goes on selling while an API process is killed, and the books balance', async () => {
    await cluster.apis[0]!.kill('SIGKILL');
    const buyer = await fundedBuyer();
    const paid = await buyer.fetch(`${cluster.url}/api/r/${listing.owner}/${listing.slug}`);
    expect(paid.status, await paid.clone().text()).toBe(200);
    await cluster.apis[0]!.restart();

    const books = await reconcileCluster(cluster);
    expect(books.problems).toEqual([]);
    expect(balanced(books), reconciliationLine(books)).toBe(true);
    expect(books.settledOnChain).toBe(2);
    expect(books.purchases).toBe(2);
  });
});
