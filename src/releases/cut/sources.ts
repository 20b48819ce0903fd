import type { AppContext } from '../../context.js';
import { repoPath } from '../../git/repos.js';
import { type TreeLimit, treeTooLarge } from '../../git/tree.js';
import { type AccessLoss, lossReason, remedyFor } from '../../github/access.js';
import { GitHubAccessError, type GitHubClient, type GitHubRepo } from '../../github/client.js';
import { fetchTaggedCommit } from '../../github/fetch.js';
import { type Listing, markSourceState } from '../../listings/service.js';
import { AppError, isAppError } from '../../platform/errors.js';
import { treeLimits } from './limits.js';

/**
 * Where a listing's releases come from. The cut itself always reads the listing's local
 * repository; a source answers what sync and a tag event need to know before a version is claimed
 * (its tags, what a ref names, whether a tree is within the limits) and, for GitHub, brings the
 * claimed commit into the local mirror when the cut runs.
 */
export interface CutSource {
  /** Every tag with the commit it names (annotated tags peeled). */
  tags(): Promise<Array<{ name: string; commit: string }>>;
  resolveCommit(ref: string): Promise<string | undefined>;
  /** `413 repo_too_large` when the commit's tree passes a limit, decided before anything is fetched. */
  assertWithinLimits(commit: string): Promise<void>;
  /** Makes `tag` name `commit` where this source keeps release tags; false when it names another. */
  createTag(tag: string, commit: string): Promise<boolean>;
}

export async function cutSource(ctx: AppContext, listing: Listing): Promise<CutSource> {
  return listing.source === 'github'
    ? githubSource(ctx, listing, await reachableSource(ctx, listing))
    : hostedSource(ctx, listing);
}

function hostedSource(ctx: AppContext, listing: Listing): CutSource {
  const repo = { owner: listing.owner, slug: listing.slug };
  const { repositories } = ctx;
  return {
    tags: () => repositories.run('repos.tags', repo),
    resolveCommit: async (ref) =>
      (await repositories.run('repos.resolve-commit', { ...repo, ref })) ?? undefined,
    assertWithinLimits: async (commit) => {
      await repositories.run('repos.check-tree', { ...repo, commit, limits: treeLimits(ctx.config) });
    },
    createTag: (tag, commit) => repositories.run('repos.create-tag', { ...repo, tag, commit }),
  };
}

function githubSource(
  ctx: AppContext,
  listing: Listing,
  { client, repo }: { client: GitHubClient; repo: GitHubRepo },
): CutSource {
  const installationId = listing.githubInstallationId!;
  const asInstallation = <T>(call: () => Promise<T>) => throughInstallation(ctx, listing, call);
  return {
    tags: () => asInstallation(() => client.tags(installationId, repo)),
    resolveCommit: async (ref) => (await asInstallation(() => client.commit(installationId, repo, ref)))?.sha,
    async assertWithinLimits(commit) {
      const found = await asInstallation(() => client.commit(installationId, repo, commit));
      if (!found) throw new Error(`GitHub has no commit ${commit} in ${repo.fullName}`);
      const size = await asInstallation(() => client.treeSize(installationId, repo, found.treeSha));
      const limits = treeLimits(ctx.config);
      // A listing GitHub truncated holds more entries than any limit allows.
      const over: TreeLimit | undefined =
        size.truncated || size.files > limits.maxFiles
          ? 'files'
          : size.bytes > limits.maxBytes
            ? 'bytes'
            : size.depth > limits.maxDepth
              ? 'depth'
              : undefined;
      if (over) throw treeTooLarge(commit, limits, over);
    },
    // GitHub's tags are the creator's; the version's tag is written in the local mirror when the
    // commit is fetched (`fetchCutCommit`), so the release log and the changelog read it there.
    createTag: async () => true,
  };
}

/**
 * Brings the cut's commit into the listing's local repository: nothing to do for a hosted
 * listing (it was pushed); a shallow fetch from GitHub with a fresh installation token otherwise,
 * after checking again that the repository is reachable, private and within the limits.
 */
export async function fetchCutCommit(
  ctx: AppContext,
  listing: Listing,
  cut: { commitSha: string; tag: string },
): Promise<void> {
  if (listing.source !== 'github') return;
  const reached = await reachableSource(ctx, listing);
  const source = githubSource(ctx, listing, reached);
  await source.assertWithinLimits(cut.commitSha);
  const tagNamesCommit = (await source.resolveCommit(`refs/tags/${cut.tag}`)) === cut.commitSha;
  const { client, repo } = reached;
  const token = await throughInstallation(ctx, listing, () => client.token(listing.githubInstallationId!));
  await fetchTaggedCommit(
    client.config,
    repoPath(ctx.config, listing.owner, listing.slug),
    { cloneUrl: repo.cloneUrl, token },
    { ...cut, tagNamesCommit },
  );
}

/**
 * A call through the listing's installation. The installation refusing it (uninstalled, suspended
 * or its token refused since the repository was reached) is the source refusing: the listing is
 * marked unreachable and the call answers as `reachableSource` does, so a cut fails at once with
 * the reason instead of being retried.
 */
export async function throughInstallation<T>(
  ctx: AppContext,
  listing: Listing,
  call: () => Promise<T>,
): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (!(error instanceof GitHubAccessError)) throw error;
    throw await accessLost(ctx, listing, error.loss);
  }
}

/**
 * The listing's repository as GitHub shows it now. A source that cannot be cut from is recorded
 * on the listing (the creator sees why) and refused: `404 not_found` when the App lost access,
 * `422 public_repo` when the repository was made public. A source that works again is marked so.
 */
export async function reachableSource(
  ctx: AppContext,
  listing: Listing,
): Promise<{ client: GitHubClient; repo: GitHubRepo }> {
  const client = ctx.github;
  if (!client) throw await accessLost(ctx, listing, 'no_app');
  let repo: GitHubRepo | undefined;
  try {
    repo = await client.repo(listing.githubInstallationId!, { id: listing.githubRepoId! });
  } catch (error) {
    if (!(error instanceof GitHubAccessError)) throw error;
    throw await accessLost(ctx, listing, error.loss);
  }
  if (!repo) throw await accessLost(ctx, listing, 'repo_unreached');
  if (!repo.private) {
    const reason = `${repo.fullName} is public; only private repositories can be sold`;
    await markSourceState(ctx, [listing], 'public', reason);
    throw new AppError('public_repo', {
      message: `${reason}. Make it private again, then sync`,
      details: { source_state: 'public' },
    });
  }
  if (listing.sourceState !== 'ok') await markSourceState(ctx, [listing], 'ok', null);
  return { client, repo };
}

/** A refusal of the source itself (GitHub access gone, repository public): it has `details.source_state`. */
export function isSourceRefusal(error: unknown): error is AppError {
  return (
    isAppError(error) && (error.details as { source_state?: unknown } | undefined)?.source_state !== undefined
  );
}

/**
 * Records that the listing's repository is out of the App's reach, and the refusal to answer. A
 * listing unreachable already keeps its reason (a webhook's is more precise than what a refused
 * call can tell), and the answer gives that reason with the advice that fits it.
 */
async function accessLost(ctx: AppContext, listing: Listing, loss: AccessLoss): Promise<AppError> {
  const [recorded] = await markSourceState(ctx, [listing], 'unreachable', lossReason(loss));
  const reason = recorded?.reason ?? lossReason(loss);
  return new AppError('not_found', {
    message: `No new release can be cut from ${listing.githubRepo}: ${reason}. ${remedyFor(reason)}; what buyers own stays downloadable`,
    details: { source_state: 'unreachable' },
  });
}
