import type { z } from 'zod';
import type { Config } from '../config.js';
import type { HostKey } from '../git/host-keys.js';
import { DEFAULT_BRANCH, remoteUrl } from '../git/repos.js';
import { formatMicroUsdc } from '../platform/money.js';
import type { LoggedRelease } from '../releases/releases.js';
import type { ReleaseCutRow } from '../releases/store.js';
import { releaseBody } from '../releases/views.js';
import type { ListingReleaseSchema, ListingSchema } from './schemas.js';
import type { Listing } from './service.js';

export type ListingBody = z.infer<typeof ListingSchema>;

export interface ListingViewInput {
  listing: Listing;
  latest: LoggedRelease | null;
  newest: LoggedRelease | null;
  hostKeys: HostKey[];
  /** Only GET /api/listings/{id} (and the single-listing answers) carry the full scan reports. */
  withScanReport?: boolean;
  deployKeyFingerprint?: string | null;
  /** Single-listing answers: claimed versions without a release. */
  cuts?: ReleaseCutRow[];
}

function listingRelease(
  release: LoggedRelease,
  withScanReport: boolean,
): z.infer<typeof ListingReleaseSchema> {
  const body = releaseBody(release);
  return withScanReport ? { ...body, scan_report: release.scan ?? null } : body;
}

/** The licence the analysis found in a release, when it recognised one (ANALYSIS.md `licence`). */
function foundLicence(release: LoggedRelease | null): string | null {
  const licence = (release?.computed as { licence?: { spdx?: string; verdict?: string } } | null)?.licence;
  return licence?.spdx && (licence.verdict === 'matched' || licence.verdict === 'declared')
    ? licence.spdx
    : null;
}

/** The creator's view of a listing: the same `pricing` block on every route that returns one. */
export function listingBody(config: Config, input: ListingViewInput): ListingBody {
  const { listing, latest, newest } = input;
  const withScanReport = input.withScanReport ?? false;
  const body: ListingBody = {
    id: listing.id,
    owner: listing.owner,
    slug: listing.slug,
    source: listing.source,
    status: listing.status,
    pricing: {
      price_micro: listing.priceMicro === null ? null : formatMicroUsdc(listing.priceMicro),
      update_price_micro: formatMicroUsdc(listing.updatePriceMicro),
    },
    description: listing.description,
    trigger_hint: listing.triggerHint,
    licence: listing.licence ?? foundLicence(latest ?? newest),
    created_at: listing.createdAt.toISOString(),
    published_at: listing.publishedAt?.toISOString() ?? null,
    retired_at: listing.retiredAt?.toISOString() ?? null,
    latest_release: latest ? listingRelease(latest, withScanReport) : null,
  };
  if (input.cuts) {
    body.cuts = input.cuts.map((cut) => ({
      version: cut.version,
      tag: cut.tag,
      commit_sha: cut.commitSha,
      trigger: cut.trigger,
      state: cut.state as 'queued' | 'failed',
      failure_reason: cut.failureReason,
      requested_at: cut.requestedAt.toISOString(),
      finished_at: cut.finishedAt?.toISOString() ?? null,
    }));
  }
  if (newest && newest.id !== latest?.id) body.newest_release = listingRelease(newest, withScanReport);
  if (listing.source === 'hosted') {
    body.remote = remoteUrl(config, listing.owner, listing.slug);
    body.default_branch = DEFAULT_BRANCH;
    body.host_key_fingerprints = input.hostKeys.map((key) => ({ type: key.type, sha256: key.sha256 }));
    if (input.deployKeyFingerprint !== undefined) body.deploy_key_fingerprint = input.deployKeyFingerprint;
  }
  return body;
}
