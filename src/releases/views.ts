import { z } from 'zod';
import { formatMicroUsdc, MicroUsdc } from '../platform/money.js';
import type { ReleaseRow } from './store.js';

export const DiffSummarySchema = z
  .object({
    files_added: z.number().int(),
    files_changed: z.number().int(),
    files_removed: z.number().int(),
    additions: z.number().int(),
    deletions: z.number().int(),
    components_touched: z.array(z.string()),
  })
  .meta({ id: 'DiffSummary', description: 'Changes since the previous release (everything, for the first)' });

export const ReleaseSchema = z
  .object({
    version: z.string().meta({ examples: ['1.2.0'] }),
    tag: z.string().meta({ examples: ['v1.2.0'] }),
    commit_sha: z.string().meta({ description: '40 hex characters' }),
    artifact_sha256: z.string().nullable().meta({
      description:
        'SHA-256 of the zip bytes, 64 hex characters; null only on a release refused for a size limit before any zip was made (its `scan` is `fail`; it is never sold)',
    }),
    published_at: z.iso.datetime(),
    changelog: z.string(),
    diff_summary: DiffSummarySchema.nullable(),
    scan: z.enum(['pending', 'pass', 'fail']).meta({
      description: '`pass` is the passing verdict; `pending` until inspection finishes; terminal once set',
    }),
    scanner_version: z.string().nullable(),
    analyzer_version: z.string().nullable(),
    price_micro: MicroUsdc.nullable().meta({
      description:
        'The price in force when the release went on sale (its cut, or the listing’s publication for releases cut before it); null only on a draft not yet priced',
    }),
    update_price_micro: MicroUsdc.meta({
      description: 'The update price in force when the release went on sale',
    }),
  })
  .meta({ id: 'Release' });

export type ReleaseBody = z.infer<typeof ReleaseSchema>;

/** SPEC.md's Release object: the release log, the update 402 and the listing views all use this. */
export function releaseBody(row: ReleaseRow): ReleaseBody {
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
