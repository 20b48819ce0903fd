import type { AppContext } from '../context.js';
import { listTags } from '../git/refs.js';
import type { Listing } from '../listings/service.js';
import { cutJob } from './cut-job.js';
import { cutVersions, insertCut, type ReleaseCutRow } from './store.js';
import { compareVersions, versionOfTag } from './versions.js';

/**
 * Claims `version` for a cut and sends the job. The claim is the durable record (the job only
 * nudges; `resendCutsJob` re-sends claims a crash left queued). Undefined when the version was
 * claimed already (also by a concurrent push or sync).
 */
export async function requestCut(
  ctx: AppContext,
  listing: Listing,
  cut: { version: string; tag: string; commitSha: string; trigger: 'push' | 'sync' },
): Promise<ReleaseCutRow | undefined> {
  const row = await insertCut(ctx.database.db, {
    listingId: listing.id,
    ...cut,
    requestedAt: ctx.clock.now(),
  });
  if (row) await sendCutJob(ctx, row.id);
  return row;
}

export async function sendCutJob(ctx: AppContext, cutId: string): Promise<void> {
  // Without a queue (one-off commands) the claim waits for a worker's resend.
  await ctx.jobs?.send(cutJob, { cutId }, { singletonKey: cutId });
}

/** Release tags (`vX.Y.Z` pointing at a commit) not yet claimed by a cut, oldest version first. */
export async function uncutTags(ctx: AppContext, listing: Listing, gitDir: string) {
  const claimed = await cutVersions(ctx.database.db, listing.id);
  return (await listTags(gitDir))
    .map((tag) => ({ ...tag, version: versionOfTag(tag.name) }))
    .filter(
      (tag): tag is typeof tag & { version: string } =>
        tag.version !== undefined && !claimed.has(tag.version),
    )
    .sort((a, b) => compareVersions(a.version, b.version));
}

/** After a push: one cut per new release tag. Returns the versions queued. */
export async function cutPushedTags(ctx: AppContext, listing: Listing, gitDir: string): Promise<string[]> {
  const queued: string[] = [];
  for (const tag of await uncutTags(ctx, listing, gitDir)) {
    const row = await requestCut(ctx, listing, {
      version: tag.version,
      tag: tag.name,
      commitSha: tag.commit,
      trigger: 'push',
    });
    if (row) queued.push(tag.version);
  }
  return queued;
}
