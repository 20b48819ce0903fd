import type { AppContext } from '../context.js';
import type { ListingReleases } from '../listings/routes.js';
import { publishOwnListing } from './publish.js';
import { headReleases, unfinishedCuts } from './service.js';
import { computedParts, tagChangesOf } from './store.js';
import { cutStageBody, type StagedRelease, shownRelease } from './views.js';

/** What the listing routes show of a listing's releases, and publishing, which the verdicts decide. */
export function listingReleases(ctx: AppContext): ListingReleases {
  const db = ctx.database.db;
  return {
    async heads(listings) {
      const heads = await headReleases(
        db,
        listings.map((listing) => listing.id),
      );
      const ids = [...heads.values()].flatMap(({ latest, newest }) => [latest?.id, newest?.id]);
      const licences = await computedParts(db, [...new Set(ids.filter((id) => id !== undefined))], 'licence');
      return new Map(
        listings.map((listing) => {
          const { latest, newest } = heads.get(listing.id)!;
          const shown = (row: StagedRelease | null) =>
            row && shownRelease(row, listing, licences.get(row.id));
          return [listing.id, { latest: shown(latest), newest: shown(newest) }];
        }),
      );
    },
    async unfinishedCuts(listingId) {
      return (await unfinishedCuts(db, listingId)).map((cut) => ({
        version: cut.version,
        tag: cut.tag,
        commit_sha: cut.commitSha,
        trigger: cut.trigger,
        state: cut.state as 'queued' | 'failed',
        failure_reason: cut.failureReason,
        requested_at: cut.requestedAt.toISOString(),
        finished_at: cut.finishedAt?.toISOString() ?? null,
        ...(cut.state === 'queued' && cut.stage && cut.stageAt
          ? { stage: cutStageBody({ stage: cut.stage, at: cut.stageAt }) }
          : {}),
      }));
    },
    async tagChanges(listingId) {
      return (await tagChangesOf(db, listingId)).map((change) => ({
        tag: change.tag,
        released_commit_sha: change.releasedCommitSha,
        commit_sha: change.commitSha,
        seen_at: change.seenAt.toISOString(),
      }));
    },
    publish: (creatorId, listingId) => publishOwnListing(ctx, creatorId, listingId),
  };
}
