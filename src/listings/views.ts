import type { z } from 'zod';
import type { Config } from '../config.js';
import type { PublicHostKey } from '../git/host-keys.js';
import { DEFAULT_BRANCH, remoteUrl } from '../git/repos.js';
import { formatMicroUsdc } from '../platform/money/money.js';
import type {
  ListingCutSchema,
  ListingReleaseSchema,
  ListingSchema,
  ReleaseSchema,
  TagChangeSchema,
} from './schemas.js';
import type { Listing } from './service.js';

export type ListingBody = z.infer<typeof ListingSchema>;
export type ListingCut = z.infer<typeof ListingCutSchema>;
export type TagChange = z.infer<typeof TagChangeSchema>;

/** A release as a listing shows it; releases/ supplies it (`ListingReleases` in routes.ts). */
export interface ShownRelease {
  id: string;
  body: z.infer<typeof ReleaseSchema>;
  /** The full trust report, shown on single-listing answers. */
  scanReport: unknown;
  /** The licence the analysis found (`computed.licence`). */
  licence: unknown;
}

/** The head releases of one listing: the newest passing one, and the newest of any verdict. */
export interface ReleaseHeads {
  latest: ShownRelease | null;
  newest: ShownRelease | null;
}

export interface ListingViewInput extends ReleaseHeads {
  listing: Listing;
  hostKeys: PublicHostKey[];
  /** Only GET /api/listings/{id} (and the single-listing answers) carry the full scan reports. */
  withScanReport?: boolean;
  deployKeyFingerprint?: string | null;
  /** Single-listing answers: claimed versions without a release. */
  cuts?: ListingCut[];
  /** Single-listing answers of a GitHub listing: its released tags moved since. */
  tagChanges?: TagChange[];
}

/**
 * A release in a creator's answer (`ListingRelease`): with the full scan report on GET
 * /api/listings/{id}, the other single-listing answers and GET /api/listings/{id}/releases.
 */
export function listingRelease(
  release: ShownRelease,
  withScanReport: boolean,
): z.infer<typeof ListingReleaseSchema> {
  return withScanReport ? { ...release.body, scan_report: release.scanReport ?? null } : release.body;
}

/** The licence the analysis found in a release, when it recognised one (ANALYSIS.md `licence`). */
function foundLicence(release: ShownRelease | null): string | null {
  const licence = release?.licence as { spdx?: string; verdict?: string } | null | undefined;
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
  if (input.cuts) body.cuts = input.cuts;
  if (newest && newest.id !== latest?.id) body.newest_release = listingRelease(newest, withScanReport);
  if (listing.source === 'hosted') {
    body.remote = remoteUrl(config, listing.owner, listing.slug);
    body.default_branch = DEFAULT_BRANCH;
    body.host_key_fingerprints = input.hostKeys.map((key) => ({ type: key.type, sha256: key.sha256 }));
    if (input.deployKeyFingerprint !== undefined) body.deploy_key_fingerprint = input.deployKeyFingerprint;
  } else {
    body.github = {
      installation_id: listing.githubInstallationId!,
      repo_id: listing.githubRepoId!,
      repo: listing.githubRepo!,
      state: listing.sourceState,
      reason: listing.sourceStateReason,
      state_changed_at: listing.sourceStateAt?.toISOString() ?? null,
    };
    if (input.tagChanges) body.github.tag_changes = input.tagChanges;
  }
  return body;
}
