import type { AppContext } from '../../context.js';
import { listTags } from '../../git/refs.js';
import { lockCreator } from '../../identity/creators.js';
import type { Listing } from '../../listings/service.js';
import { isAppError } from '../../platform/errors.js';
import { logEvent } from '../../platform/events.js';
import { compareVersions, versionOfTag } from '../../platform/versions.js';
import { cutJob } from '../jobs.js';
import { cutVersions, insertCut, type ReleaseCutRow, reclaimCut } from '../store.js';
import { assertClaimAllowed } from './limits.js';

/**
 * Claims `version` for a cut and sends the job. The claim is the durable record (the job only
 * nudges; `resendCutsJob` re-sends claims a crash left queued). Undefined when the version was
 * claimed already (also by a concurrent push or sync). A claim past the listing's releases per
 * day or the creator's storage throws the spec's error (`429 rate_limited`, `413 repo_too_large`);
 * the creator's row is locked while deciding, so two claims cannot pass a limit together, nor take
 * the same version. A version whose cut gave it back (its source refused; nothing was released)
 * is claimed through that cut's row again.
 */
export async function requestCut(
  ctx: AppContext,
  listing: Listing,
  cut: { version: string; tag: string; commitSha: string; trigger: 'push' | 'sync' },
): Promise<ReleaseCutRow | undefined> {
  const at = ctx.clock.now();
  const row = await ctx.database.db.transaction(async (tx) => {
    await lockCreator(tx, listing.creatorId);
    if ((await cutVersions(tx, listing.id)).has(cut.version)) return undefined;
    await assertClaimAllowed(tx, ctx.config, listing, at);
    const claim = { listingId: listing.id, ...cut, requestedAt: at };
    return (await reclaimCut(tx, claim)) ?? insertCut(tx, claim);
  });
  if (row) await sendCutJob(ctx, row.id);
  return row;
}

async function sendCutJob(ctx: AppContext, cutId: string): Promise<void> {
  // Without a queue (one-off commands) the claim waits for a worker's resend.
  await ctx.jobs?.send(cutJob, { cutId }, { singletonKey: cutId });
}

/** Release tags (`vX.Y.Z` pointing at a commit) not yet claimed by a cut, oldest version first. */
export async function uncutTags(
  ctx: AppContext,
  listing: Listing,
  tags: Array<{ name: string; commit: string }>,
) {
  const claimed = await cutVersions(ctx.database.db, listing.id);
  return tags
    .map((tag) => ({ ...tag, version: versionOfTag(tag.name) }))
    .filter(
      (tag): tag is typeof tag & { version: string } =>
        tag.version !== undefined && !claimed.has(tag.version),
    )
    .sort((a, b) => compareVersions(a.version, b.version));
}

/**
 * After a push: one cut per new release tag, oldest version first. Returns what to tell the
 * pusher, one line per version: queued, or why not (a limit another push or a sync reached
 * meanwhile; the tag stays and sync cuts it later).
 */
export async function cutPushedTags(ctx: AppContext, listing: Listing, gitDir: string): Promise<string[]> {
  const lines: string[] = [];
  const queued: string[] = [];
  const refused: { version: string; code: string }[] = [];
  for (const tag of await uncutTags(ctx, listing, await listTags(gitDir))) {
    try {
      const row = await requestCut(ctx, listing, {
        version: tag.version,
        tag: tag.name,
        commitSha: tag.commit,
        trigger: 'push',
      });
      if (row) {
        queued.push(tag.version);
        lines.push(`release ${tag.version} queued`);
      }
    } catch (error) {
      if (!isAppError(error)) throw error;
      refused.push({ version: tag.version, code: error.code });
      lines.push(`release ${tag.version} not queued: ${error.message}`);
    }
  }
  logEvent(ctx.log, 'push.received', { listing: `${listing.owner}/${listing.slug}`, queued, refused });
  return lines;
}
