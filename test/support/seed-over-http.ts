import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { type SshKey, sshKeygen } from '../listings/support.js';
import { gitOverSsh } from '../releases/support.js';
import { runCli } from './process.js';

/**
 * A creator and a published hosted listing made the way a creator makes them, through a running
 * service's own paths and nothing written to its database directly: an invite from the operator
 * CLI, a wallet-proved registration, a hosted listing, a real repository pushed over SSH, the cut
 * job's real snapshot, analysis and scan, then publish. The benches and the cluster test use it.
 */

export interface SeedTarget {
  /** Where the API answers. */
  url: string;
  /** The environment `repo402 invites create` needs to reach the server's database (DATA_DIR, DATABASE_URL). */
  cliEnv: Record<string, string>;
}

export interface SeededCreator {
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

export async function api<T>(
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

/** A creator registered with a fresh wallet, and an SSH key for its listings. */
export async function registerCreator(server: SeedTarget, handle: string): Promise<SeededCreator> {
  const invite = await runCli(['invites', 'create'], server.cliEnv);
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
      handle,
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

export interface ListingView {
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
export async function publishHostedListing(
  server: Pick<SeedTarget, 'url'>,
  creator: SeededCreator,
  listing: { slug: string; priceMicro: string; gitDir: string; version: string },
): Promise<SeededListing> {
  const { apiKey } = creator;
  const created = await createHostedListing(server, creator, listing);
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

/** A draft hosted listing whose repository accepts pushes with the creator's key. */
export async function createHostedListing(
  server: Pick<SeedTarget, 'url'>,
  creator: SeededCreator,
  listing: { slug: string; priceMicro: string },
): Promise<ListingView> {
  return api<ListingView>(server.url, 'POST', '/api/listings', 201, {
    apiKey: creator.apiKey,
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
}
