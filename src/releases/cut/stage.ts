import type { AppContext } from '../../context.js';
import type { CutStage } from '../../listings/cut-stages.js';
import { markCutStage } from '../store.js';

/**
 * Records that the cut of `listing`'s `version` entered `stage` now, and when it moved, tells the
 * listing's readers: the release log and the manifest page show a pending release's stage, and
 * other processes drop their copies of them.
 */
export async function enterCutStage(
  ctx: AppContext,
  listing: { id: string; owner: string; slug: string },
  version: string,
  stage: CutStage,
): Promise<void> {
  const moved = await markCutStage(
    ctx.database.db,
    { listingId: listing.id, version },
    stage,
    ctx.clock.now(),
  );
  if (moved) ctx.listingEvents.announce(listing.owner, listing.slug);
}
