import { LRUCache } from 'lru-cache';
import type { AppContext } from '../context.js';
import {
  GitHubAccessError,
  type GitHubAppInfo,
  type GitHubClient,
  type GitHubInstallation,
  GitHubRefusal,
  type InstallationRepo,
  type ListHead,
} from '../github/client.js';
import { cacheSlot } from '../platform/cache/caches.js';
import { mapConcurrently } from '../platform/concurrency.js';
import { AppError } from '../platform/errors.js';
import { CLAIM_FILE, claimNames, noAccess, readClaimFile } from './github-claim.js';
import type { ListingOwner } from './service.js';
import { liveListingsOfGitHubRepos } from './store.js';

/**
 * The GitHub repositories a creator can pick from to create a listing: every repository the App's
 * installations were given whose claim file names the caller. The App is installed by every
 * creator of the server, so its installations are everyone's: what is shown is decided by the
 * claim alone, and nothing is said of an installation or repository that does not claim the
 * caller (not its account, not its name, not that it exists).
 *
 * The scan is bounded: at most `MAX_SCANNED_INSTALLATIONS` installations and
 * `MAX_SCANNED_REPOSITORIES` repositories per call, `REQUESTS_AT_ONCE` GitHub requests at a
 * time; `truncated` says when it stopped at a bound. A claim file is read once per repository and
 * push (its text is cached by repository id, `pushed_at` and default branch), so a repeated call
 * costs the list pages only. The cache is process memory and only a cache: creating the listing
 * reads the claim afresh.
 */

/** Repositories looked at per call, across installations, in GitHub's order. */
export const MAX_SCANNED_REPOSITORIES = 200;
/** Installations looked at per call, in GitHub's order. */
export const MAX_SCANNED_INSTALLATIONS = 100;
/** GitHub requests in flight at once: list pages of several installations, or claim files. */
const REQUESTS_AT_ONCE = 4;

const CLAIM_TTL_MS = 24 * 60 * 60_000;
/** Claim files are a few handles; a larger one is read each time rather than held. */
const CLAIM_MAX_CACHED_CHARS = 64 * 1024;
const APP_INFO_TTL_MS = 60 * 60_000;

/** Claim-file texts by `<repo id>\n<pushed_at>\n<default branch>`: a new push is a new key. */
const claimTexts = cacheSlot(
  () =>
    new LRUCache<string, { text: string | null }>({
      max: 20_000,
      maxSize: 32 * 1024 * 1024,
      maxEntrySize: CLAIM_MAX_CACHED_CHARS,
      sizeCalculation: (entry) => (entry.text?.length ?? 0) + 64,
      ttl: CLAIM_TTL_MS,
    }),
);

/** `GET /app`: the App's page changes only when the operator renames it. */
const appInfos = cacheSlot(() => new LRUCache<'app', GitHubAppInfo>({ max: 1, ttl: APP_INFO_TTL_MS }));

export interface ClaimableRepository {
  githubRepoId: number;
  fullName: string;
  private: boolean;
  defaultBranch: string;
  /** The caller's live listing backed by the repository. */
  listingId: string | null;
  /** Whether any live listing (anyone's) is backed by it. */
  inUse: boolean;
}

export interface ClaimableInstallation {
  installationId: number;
  account: string;
  repositories: ClaimableRepository[];
}

export interface ClaimableRepositories {
  enabled: boolean;
  installUrl: string | null;
  claim: { file: string; line: string };
  installations: ClaimableInstallation[];
  truncated: boolean;
}

/** What the caller can list from GitHub, and what to do to list more (install the App, commit the claim). */
export async function claimableRepositories(
  ctx: AppContext,
  caller: ListingOwner,
): Promise<ClaimableRepositories> {
  const claim = { file: CLAIM_FILE, line: caller.handle };
  const client = ctx.github;
  if (!client) return { enabled: false, installUrl: null, claim, installations: [], truncated: false };
  const scan = await scanClaims(ctx, client, caller.handle).catch(unavailable);
  const repoIds = scan.installations.flatMap(({ repos }) => repos.map((repo) => repo.id));
  const live = new Map(
    (await liveListingsOfGitHubRepos(ctx.database.db, repoIds)).map((row) => [row.githubRepoId, row]),
  );
  return {
    enabled: true,
    installUrl: `${scan.app.htmlUrl}/installations/new`,
    claim,
    truncated: scan.truncated,
    installations: scan.installations.map(({ installation, repos }) => ({
      installationId: installation.id,
      account: installation.account ?? repos[0]!.ownerLogin,
      repositories: repos.map((repo) => {
        const listing = live.get(repo.id);
        return {
          githubRepoId: repo.id,
          fullName: repo.fullName,
          private: repo.private,
          defaultBranch: repo.defaultBranch,
          listingId: listing?.creatorId === caller.id ? listing.id : null,
          inUse: listing !== undefined,
        };
      }),
    })),
  };
}

interface Scanned {
  installation: GitHubInstallation;
  repos: InstallationRepo[];
}

/** The installations and, in each, the repositories whose claim names `handle`; empty ones left out. */
async function scanClaims(
  ctx: AppContext,
  client: GitHubClient,
  handle: string,
): Promise<{ app: GitHubAppInfo; installations: Scanned[]; truncated: boolean }> {
  const apps = ctx.caches.get(appInfos);
  let app = apps.get('app');
  if (!app) {
    app = await client.appInfo();
    apps.set('app', app);
  }
  const { scanned, truncated } = await listRepositories(client);
  const candidates = scanned.flatMap(({ installation, repos }) =>
    repos.map((repo) => ({ installationId: installation.id, repo })),
  );
  const texts = await mapConcurrently(candidates, REQUESTS_AT_ONCE, ({ installationId, repo }) =>
    claimText(ctx, client, installationId, repo),
  );
  const claimed = new Set(
    candidates.filter((_candidate, index) => claimNames(texts[index], handle)).map(({ repo }) => repo.id),
  );
  if (truncated) {
    ctx.log.info(
      { installations: scanned.length, repositories: candidates.length },
      'the GitHub repository scan stopped at its bound',
    );
  }
  return {
    app,
    truncated,
    installations: scanned
      .map(({ installation, repos }) => ({
        installation,
        repos: repos.filter((repo) => claimed.has(repo.id)),
      }))
      .filter(({ repos }) => repos.length > 0),
  };
}

/**
 * The installations' repositories, in GitHub's order, up to the bounds. Several installations are
 * listed at once; none more is started once enough repositories are listed, and the lists are cut
 * in GitHub's order, so the answer does not depend on which list came back first.
 */
async function listRepositories(client: GitHubClient): Promise<{ scanned: Scanned[]; truncated: boolean }> {
  const installations = await client.installations(MAX_SCANNED_INSTALLATIONS);
  // A suspended installation gets no token: it has nothing to read.
  const active = installations.items.filter((installation) => !installation.suspended);
  let listed = 0;
  const lists = await mapConcurrently(
    active,
    REQUESTS_AT_ONCE,
    async (installation): Promise<{ head: ListHead<InstallationRepo> | undefined }> => {
      // The lists before this one that have come back already are taken first: it needs no more
      // than what they leave. Uninstalled or suspended since it was listed: nothing to read there.
      const head = await client
        .installationRepositories(installation.id, MAX_SCANNED_REPOSITORIES - listed)
        .catch(noAccess);
      listed += head?.items.length ?? 0;
      return { head };
    },
    () => listed >= MAX_SCANNED_REPOSITORIES,
  );
  let budget = MAX_SCANNED_REPOSITORIES;
  let truncated = installations.more;
  const scanned: Scanned[] = [];
  for (const [index, installation] of active.entries()) {
    const list = lists[index];
    if (!list) {
      truncated = true;
      break;
    }
    if (!list.head) continue;
    const repos = list.head.items.slice(0, budget);
    if (list.head.more || repos.length < list.head.items.length) truncated = true;
    budget -= repos.length;
    scanned.push({ installation, repos });
  }
  return { scanned, truncated };
}

/** The repository's claim file as of its last push; undefined when it has none or is out of reach now. */
async function claimText(
  ctx: AppContext,
  client: GitHubClient,
  installationId: number,
  repo: InstallationRepo,
): Promise<string | undefined> {
  const cache = ctx.caches.get(claimTexts);
  const key = `${repo.id}\n${repo.pushedAt}\n${repo.defaultBranch}`;
  const cached = cache.get(key);
  if (cached) return cached.text ?? undefined;
  let text: string | undefined;
  try {
    text = await readClaimFile(client, installationId, repo);
  } catch (error) {
    // Access lost between the list and the read: nothing to show, and nothing cached, so the file
    // counts again once access is back.
    if (error instanceof GitHubAccessError) return undefined;
    throw error;
  }
  cache.set(key, { text: text ?? null });
  return text;
}

/**
 * GitHub refusing the App (its key, an outage) leaves nothing to list: the spec's `internal`,
 * saying so. The refusal itself is in the log (`GitHub refused a call of the App`).
 */
function unavailable(error: unknown): never {
  if (error instanceof GitHubRefusal || error instanceof GitHubAccessError) {
    throw new AppError('internal', {
      message:
        'GitHub did not answer the GitHub App’s requests, so its repositories cannot be listed now; try again shortly (if it persists, the operator’s log says what GitHub answered)',
    });
  }
  throw error;
}
