import type { z } from 'zod';
import { attestationUrl } from '../attestations/urls.js';
import type { AdvisoryFlagSchema, CutStageSchema, ReleaseSchema, YankSchema } from '../listings/schemas.js';
import type { ShownRelease } from '../listings/views.js';
import { formatMicroUsdc } from '../platform/money/money.js';
import type { CutStageRow, ReleaseRow } from './store.js';

export type ReleaseBody = z.infer<typeof ReleaseSchema>;
export type CutStageBody = z.infer<typeof CutStageSchema>;

/** A release as read for the log, with the stage its cut has reached while it is pending (`withCutStages`). */
export type StagedRelease = ReleaseRow & { cutStage?: CutStageRow };

/** A running cut's stage for the wire. */
export function cutStageBody(stage: CutStageRow): CutStageBody {
  return { name: stage.stage, entered_at: stage.at.toISOString() };
}
export type AdvisoryFlagBody = z.infer<typeof AdvisoryFlagSchema>;
export type YankBody = z.infer<typeof YankSchema>;

/** The stored `advisory_flag` (written by `recheckReleases`) with its time, for the wire. */
export function advisoryFlagBody(row: {
  advisoryFlag: unknown;
  advisoryFlaggedAt: Date | null;
}): AdvisoryFlagBody | undefined {
  if (!row.advisoryFlag || !row.advisoryFlaggedAt) return undefined;
  const flag = row.advisoryFlag as Omit<AdvisoryFlagBody, 'flagged_at'>;
  return {
    flagged_at: row.advisoryFlaggedAt.toISOString(),
    advisory_ids: flag.advisory_ids,
    findings: flag.findings,
  };
}

/** Where a listing's public documents live, for the links a Release object carries. */
export interface ReleaseLinks {
  baseUrl: string;
  owner: string;
  slug: string;
}

/** The release log as an Atom feed (served by public/release-feed.tsx). */
export function releaseFeedUrl(baseUrl: string, owner: string, slug: string): string {
  return `${baseUrl}/${owner}/${slug}/releases.atom`;
}

/** A listing's prices in force now: what every Release object's `price_micro` and `update_price_micro` say. */
export interface PricesInForce {
  priceMicro: bigint | null;
  updatePriceMicro: bigint;
}

/**
 * SPEC.md's Release object: the release log, the update 402 and the listing views all use this.
 * Its prices are the listing's in force now (`prices`), beside the ones it first went on sale at.
 * With `links`, a release whose verdict is recorded links its attestation.
 */
export function releaseBody(row: StagedRelease, prices: PricesInForce, links?: ReleaseLinks): ReleaseBody {
  return {
    version: row.version,
    tag: row.tag,
    commit_sha: row.commitSha,
    artifact_sha256: row.artifactSha256,
    published_at: row.publishedAt.toISOString(),
    changelog: row.changelog,
    diff_summary: (row.diffSummary as ReleaseBody['diff_summary']) ?? null,
    scan: row.verdict,
    scanner_version: row.scannerVersion,
    analyzer_version: row.analyzerVersion,
    price_micro: prices.priceMicro === null ? null : formatMicroUsdc(prices.priceMicro),
    update_price_micro: formatMicroUsdc(prices.updatePriceMicro),
    ...(row.onSaleAt && row.onSalePriceMicro !== null && row.onSaleUpdatePriceMicro !== null
      ? {
          first_on_sale: {
            at: row.onSaleAt.toISOString(),
            price_micro: formatMicroUsdc(row.onSalePriceMicro),
            update_price_micro: formatMicroUsdc(row.onSaleUpdatePriceMicro),
          },
        }
      : {}),
    ...withAdvisoryFlag(row),
    ...withYank(row),
    ...(links && row.verdict !== 'pending'
      ? { attestation_url: attestationUrl(links.baseUrl, links.owner, links.slug, row.version) }
      : {}),
    // A verdict ends the cut: its last stage is history, not progress.
    ...(row.verdict === 'pending' && row.cutStage ? { stage: cutStageBody(row.cutStage) } : {}),
  };
}

/** `{advisory_flag}` when the release carries one, else nothing: the field is absent, never null. */
export function withAdvisoryFlag(row: Parameters<typeof advisoryFlagBody>[0]): {
  advisory_flag?: AdvisoryFlagBody;
} {
  const flag = advisoryFlagBody(row);
  return flag ? { advisory_flag: flag } : {};
}

/** `{yanked}` when the operator yanked the release, else nothing: the field is absent, never null. */
export function withYank(row: { yankedAt: Date | null; yankReason: string | null }): { yanked?: YankBody } {
  return row.yankedAt
    ? { yanked: { yanked_at: row.yankedAt.toISOString(), reason: row.yankReason ?? '' } }
    : {};
}

/** A release as the creator's listing views show it: its Release body with the full scan report (and, for a listing's head releases, the licence found). */
export function shownRelease(
  row: StagedRelease,
  prices: PricesInForce,
  licence: unknown = null,
): ShownRelease {
  return { id: row.id, body: releaseBody(row, prices), scanReport: row.scan, licence };
}
