import type { z } from 'zod';
import type { ReleaseSchema } from '../listings/schemas.js';
import type { ShownRelease } from '../listings/views.js';
import { formatMicroUsdc } from '../platform/money.js';
import type { ReleaseRow, ReleaseSummaryRow } from './store.js';

export type ReleaseBody = z.infer<typeof ReleaseSchema>;

/** SPEC.md's Release object: the release log, the update 402 and the listing views all use this. */
export function releaseBody(row: ReleaseSummaryRow): ReleaseBody {
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
    price_micro: row.priceMicro === null ? null : formatMicroUsdc(row.priceMicro),
    update_price_micro: formatMicroUsdc(row.updatePriceMicro),
  };
}

/** A release as the creator's listing views show it: its Release body with the full scan report. */
export function shownRelease(row: ReleaseRow): ShownRelease {
  return { id: row.id, body: releaseBody(row), scanReport: row.scan, computed: row.computed };
}
