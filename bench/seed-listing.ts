import { execFile } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { generateLargeRepo } from '../test/fixtures/large-repo.js';
import { type SshKey, sshKeygen } from '../test/listings/support.js';
import { gitOverSsh, workRepo } from '../test/releases/support.js';
import { runCli } from '../test/support/process.js';

const run = promisify(execFile);

/**
 * Seeds listings the way a creator makes them, through the running service's own paths and
 * nothing written to its database directly: an invite from the operator CLI (over the control
 * socket), a wallet-proved registration, a hosted listing, a real repository pushed over SSH, the
 * cut job's real snapshot, analysis and scan, then publish.
 */

export interface SeedTarget {
  url: string;
  dataDir: string;
}

interface BenchCreator {
  handle: string;
  apiKey: string;
  key: SshKey;
}

export interface SeededListing {
  id: string;
  owner: string;
  slug: string;
  version: string;
}

async function api<T>(
  base: string,
  method: string,
  route: string,
  expected: number,
  options: { body?: unknown; apiKey?: string } = {},
): Promise<T> {
  const response = await fetch(`${base}${route}`, {
    method,
    headers: {
      ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
    },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await response.text();
  if (response.status !== expected)
    throw new Error(`${method} ${route} answered ${response.status}, expected ${expected}: ${text}`);
  return JSON.parse(text) as T;
}

/**
 * What the benches sell: `bench-creator/bench-tool` at 9 USD (benchToolRepo's small product)
 * and, with `large`, the free `bench-creator/bench-large` whose zip is about 100 MB.
 */
export async function seedBenchListings(
  server: SeedTarget,
  options: { large: boolean },
): Promise<{ listing: SeededListing; large?: SeededListing }> {
  const creator = await registerBenchCreator(server);
  const toolRepo = await benchToolRepo();
  try {
    const listing = await publishListing(server, creator, {
      slug: 'bench-tool',
      priceMicro: '9000000',
      gitDir: toolRepo,
      version: '1.0.0',
    });
    if (!options.large) return { listing };
    const large = await publishListing(server, creator, {
      slug: 'bench-large',
      priceMicro: '0',
      gitDir: await largeZipRepo(),
      version: '1.0.0',
    });
    return { listing, large };
  } finally {
    await rm(toolRepo, { recursive: true, force: true });
    await rm(path.dirname(creator.key.file), { recursive: true, force: true });
  }
}

async function registerBenchCreator(server: SeedTarget): Promise<BenchCreator> {
  const invite = await runCli(['invites', 'create'], { DATA_DIR: server.dataDir });
  if (invite.code !== 0) throw new Error(`repo402 invites create failed: ${invite.stderr}`);
  const wallet = privateKeyToAccount(generatePrivateKey());
  const terms = await api<{ version: string }>(server.url, 'GET', '/api/terms', 200);
  const challenge = await api<{ nonce: string; message: string }>(
    server.url,
    'GET',
    `/api/auth/challenge?address=${wallet.address}&purpose=address_proof`,
    200,
  );
  const created = await api<{ api_key: string; handle: string }>(server.url, 'POST', '/api/creators', 201, {
    body: {
      handle: 'bench-creator',
      payout_address: wallet.address,
      accepted_terms_version: terms.version,
      address_proof: {
        nonce: challenge.nonce,
        signature: await wallet.signMessage({ message: challenge.message }),
      },
      invite_code: invite.stdout.trim(),
      abuse_contact: 'abuse@example.com',
    },
  });
  return { handle: created.handle, apiKey: created.api_key, key: await sshKeygen('ed25519') };
}

interface ListingView {
  id: string;
  owner: string;
  slug: string;
  remote: string;
  latest_release: { version: string } | null;
  newest_release?: { version: string; scan: string; scan_report?: unknown };
}

/**
 * Creates a hosted listing, pushes `main` and the tags of the repository at `gitDir` to it, waits
 * for the cut of `version` to pass its scan, and publishes the listing.
 */
async function publishListing(
  server: SeedTarget,
  creator: BenchCreator,
  listing: { slug: string; priceMicro: string; gitDir: string; version: string },
): Promise<SeededListing> {
  const { apiKey } = creator;
  const created = await api<ListingView>(server.url, 'POST', '/api/listings', 201, {
    apiKey,
    body: {
      source: 'hosted',
      slug: listing.slug,
      ssh_public_key: creator.key.publicKey,
      price_micro: listing.priceMicro,
      update_price_micro: '0',
      description: 'Release notes from commits, for agents',
      trigger_hint: 'When a tag is pushed',
    },
  });
  const push = await gitOverSsh(listing.gitDir, creator.key.file, ['push', created.remote, 'main', '--tags']);
  if (push.code !== 0) throw new Error(`git push to ${created.remote} failed: ${push.stderr}`);
  // A 100 MB release takes minutes to cut on a loaded two-core machine.
  const deadline = Date.now() + 10 * 60_000;
  for (;;) {
    const view = await api<ListingView>(server.url, 'GET', `/api/listings/${created.id}`, 200, { apiKey });
    if (view.latest_release?.version === listing.version) break;
    if (view.newest_release && view.newest_release.scan !== 'pending')
      throw new Error(
        `${listing.slug} ${view.newest_release.version} did not pass: ${JSON.stringify(view.newest_release)}`,
      );
    if (Date.now() > deadline) throw new Error(`${listing.slug} was not cut within 10 minutes`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  await api(server.url, 'POST', `/api/listings/${created.id}/publish`, 200, { apiKey });
  return { id: created.id, owner: created.owner, slug: created.slug, version: listing.version };
}

/**
 * A realistic small product, tagged v1.0.0 in a fresh work tree: 400 TypeScript source files, a
 * README and a package.json with 40 dependencies, so the manifest carries every computed field a
 * real one has (about 38 KB of JSON).
 */
async function benchToolRepo(): Promise<string> {
  const repo = await workRepo();
  const files: Record<string, string> = {
    'README.md': `# bench-tool\n\n${'A paragraph of README text for the benchmark, with `code` and *emphasis*.\n\n'.repeat(60)}`,
    'package.json': JSON.stringify(
      {
        name: 'bench-tool',
        version: '1.0.0',
        dependencies: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`dep-${i}`, '^1.0.0'])),
      },
      null,
      2,
    ),
  };
  for (let i = 0; i < 400; i++) {
    files[`src/module-${Math.floor(i / 20)}/file-${i}.ts`] =
      `export function f${i}(x: number): number {\n  return x * ${i} + ${i % 7};\n}\n`.repeat(10);
  }
  for (const [name, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(repo.dir, name)), { recursive: true });
    await writeFile(path.join(repo.dir, name), content);
  }
  await repo.git('add', '-A');
  await repo.git('commit', '-q', '-m', 'First release');
  await repo.git('tag', 'v1.0.0');
  return repo.dir;
}

/**
 * A bare repository whose release zip is about 100 MB: 100 binary files of 1 MiB of pseudo-random
 * (incompressible) bytes and one source file, tagged v1.0.0. Generated once and kept in the temp
 * directory, like bench/release-cut.ts's large repository.
 */
async function largeZipRepo(): Promise<string> {
  const gitDir = path.join(os.tmpdir(), 'repo402-bench-100mb.git');
  const tagged = await run('git', ['-C', gitDir, 'rev-parse', '--verify', '-q', 'v1.0.0']).then(
    () => true,
    () => false,
  );
  if (!tagged) {
    await rm(gitDir, { recursive: true, force: true });
    await run('git', ['init', '-q', '--bare', '-b', 'main', gitDir]);
    await generateLargeRepo(gitDir, { files: 101, binaryFiles: 100, totalBytes: 100 * 1024 * 1024 + 8192 });
  }
  return gitDir;
}
