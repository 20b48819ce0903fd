import type { AppContext } from '../context.js';
import { DEFAULT_BRANCH } from '../git/repos.js';
import { creatorView } from '../identity/creators.js';
import type { Listing } from '../listings/service.js';
import { isSourceRefusal, reachableSource, throughInstallation } from './cut/sources.js';
import type { HostingMeta } from './inspection/inspector.js';

/**
 * What the manifest says about where a release's code is hosted and who owns it: GitHub's own
 * description of the repository and its owner for a GitHub listing, repo402's records for a
 * hosted one (no stars, topics or profile: repo402 keeps none).
 */
export async function hostingMeta(ctx: AppContext, listing: Listing): Promise<HostingMeta | undefined> {
  if (listing.source === 'github') {
    // The release is cut already: a source lost since (also between these two calls) leaves its
    // hosting metadata unknown rather than the release uninspected (the listing records why).
    const knownOnly = (error: unknown) => {
      if (isSourceRefusal(error)) return undefined;
      throw error;
    };
    const reached = await reachableSource(ctx, listing).catch(knownOnly);
    if (!reached) return undefined;
    const { client, repo } = reached;
    const owner = await throughInstallation(ctx, listing, async () => ({
      found: await client.owner(listing.githubInstallationId!, repo.ownerLogin),
    })).catch(knownOnly);
    if (!owner) return undefined;
    return { repoMeta: repo.meta, owner: owner.found ?? { ...NO_OWNER, login: repo.ownerLogin } };
  }
  const creator = await creatorView(ctx.database.db, listing.creatorId, ctx.clock.now());
  return {
    repoMeta: {
      repo_id: null,
      name: listing.slug,
      full_name: `${listing.owner}/${listing.slug}`,
      description: listing.description || null,
      homepage: null,
      topics: null,
      language: null,
      default_branch: DEFAULT_BRANCH,
      size_kb: null,
      created_at: listing.createdAt.toISOString(),
      pushed_at: null,
      licence_spdx: listing.licence,
      open_issues: null,
      stars: null,
      forks: null,
      watchers: null,
      archived: listing.status === 'retired',
      private: true,
      html_url: `${ctx.config.baseUrl}/${listing.owner}/${listing.slug}`,
    },
    owner: { ...NO_OWNER, login: listing.owner, created_at: creator?.createdAt.toISOString() ?? null },
  };
}

const NO_OWNER: HostingMeta['owner'] = {
  login: null,
  name: null,
  avatar_url: null,
  bio: null,
  blog: null,
  company: null,
  location: null,
  twitter_username: null,
  followers: null,
  public_repos: null,
  created_at: null,
  html_url: null,
};
