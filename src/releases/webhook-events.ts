import { attestationUrl } from '../attestations/urls.js';
import type { Db } from '../db/connect.js';
import type { Listing } from '../listings/service.js';
import { formatMicroUsdc } from '../platform/money/money.js';
import { enqueueWebhookEvent } from '../webhooks/events.js';
import type { ReleaseRow } from './store.js';

/**
 * The webhook events of a recorded verdict (docs/WEBHOOKS.md), enqueued in the transaction that
 * records it: `release.cut` (and `release.scan_failed` when it failed) for the creator, and
 * `release.published` for the listing's holders when the release went on sale with it.
 */
export async function enqueueVerdictEvents(
  tx: Db,
  baseUrl: string,
  listing: Listing,
  release: ReleaseRow,
  verdict: 'pass' | 'fail',
  onSale: boolean,
  at: Date,
): Promise<void> {
  const about = releaseData(baseUrl, listing, release);
  const scan = release.scan as { counts?: unknown } | null;
  const cut = { ...about, verdict, ...(scan?.counts ? { scan_counts: scan.counts } : {}) };
  await enqueueWebhookEvent(
    tx,
    {
      type: 'release.cut',
      creatorId: listing.creatorId,
      listingId: listing.id,
      data: cut,
      dedupeKey: `release.cut:${release.id}`,
    },
    at,
  );
  if (verdict === 'fail') {
    await enqueueWebhookEvent(
      tx,
      {
        type: 'release.scan_failed',
        creatorId: listing.creatorId,
        listingId: listing.id,
        data: cut,
        dedupeKey: `release.scan_failed:${release.id}`,
      },
      at,
    );
  }
  if (onSale) {
    await enqueueWebhookEvent(
      tx,
      {
        type: 'release.published',
        listingId: listing.id,
        data: {
          ...about,
          price_micro: listing.priceMicro === null ? null : formatMicroUsdc(listing.priceMicro),
          update_price_micro: formatMicroUsdc(listing.updatePriceMicro),
          resource_url: `${baseUrl}/api/r/${listing.owner}/${listing.slug}`,
        },
        dedupeKey: `release.published:${release.id}`,
      },
      at,
    );
  }
}

/** What every release event says of the release. */
export function releaseData(
  baseUrl: string,
  listing: Pick<Listing, 'id' | 'owner' | 'slug'>,
  release: ReleaseRow,
) {
  return {
    listing: { id: listing.id, owner: listing.owner, slug: listing.slug },
    version: release.version,
    tag: release.tag,
    commit_sha: release.commitSha,
    published_at: release.publishedAt.toISOString(),
    changelog: release.changelog,
    diff_summary: release.diffSummary ?? null,
    attestation_url: attestationUrl(baseUrl, listing.owner, listing.slug, release.version),
    release_log_url: `${baseUrl}/api/v/${listing.owner}/${listing.slug}/releases`,
    feed_url: `${baseUrl}/${listing.owner}/${listing.slug}/releases.atom`,
  };
}
