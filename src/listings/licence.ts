import type { AppContext } from '../context.js';
import { DEFAULT_BRANCH } from '../git/repos.js';
import { AppError } from '../platform/errors.js';
import { LICENCE_TEMPLATES, type LicenceId } from './data/licence-texts.js';
import { liveOwnedListing, retiredError } from './service.js';
import { updateListing } from './store.js';

export interface LicenceCommit {
  listingId: string;
  spdx: LicenceId;
  commitSha: string;
  created: boolean;
}

/**
 * Commits the standard text of an allow-listed licence as LICENSE on `main` of a hosted listing,
 * authored by the service, with the year and the owner's handle as holder. The repository refuses
 * non-fast-forward pushes, so the creator's next push cannot overwrite it: they pull first. Never
 * on an empty repository: a LICENSE as its first commit would make the creator's first push one.
 */
export async function commitLicence(
  ctx: AppContext,
  creatorId: string,
  listingId: string,
  spdx: LicenceId,
): Promise<LicenceCommit> {
  const listing = await liveOwnedListing(ctx.database.db, creatorId, listingId);
  if (listing.source !== 'hosted') {
    throw AppError.invalid([{ field: 'spdx', reason: 'only hosted listings can have a LICENSE committed' }]);
  }
  const at = ctx.clock.now();
  const result = await ctx.repositories.run('repos.commit-file', {
    owner: listing.owner,
    slug: listing.slug,
    branch: DEFAULT_BRANCH,
    path: 'LICENSE',
    content: licenceText(spdx, at.getUTCFullYear(), listing.owner),
    message: `Add LICENSE (${spdx})\n\nCommitted by repo402 at the request of ${listing.owner}.`,
    at: at.toISOString(),
  });
  if ('branchMissing' in result) {
    throw AppError.invalid([
      {
        field: 'spdx',
        reason: `the repository has no ${DEFAULT_BRANCH} branch yet: push your code first, then commit the licence on top of it`,
      },
    ]);
  }
  if (!(await updateListing(ctx.database.db, listing.id, { licence: spdx }))) throw retiredError();
  return { listingId: listing.id, spdx, commitSha: result.commit, created: result.created };
}

/** The licence's text with the year and the holder filled in. */
function licenceText(spdx: LicenceId, year: number, holder: string): string {
  return LICENCE_TEMPLATES[spdx].replaceAll('{{year}}', String(year)).replaceAll('{{holder}}', holder);
}
