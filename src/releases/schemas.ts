import { z } from 'zod';
import { DiffSummarySchema, ListingReleaseSchema, ReleaseSchema } from '../listings/schemas.js';
import { singleLineText } from '../platform/text-fields.js';

export const SyncRequestSchema = z
  .strictObject({
    ref: z
      .string()
      .regex(/^(?!-)[A-Za-z0-9._/~^-]{1,255}$/, 'a branch, tag, commit id or revision such as main~1')
      .optional()
      .meta({ description: 'Branch, tag or commit to cut; an untagged ref needs `version`' }),
    version: z
      .string()
      .max(32)
      .optional()
      .meta({ description: 'X.Y.Z; required when `ref` carries no vX.Y.Z tag' }),
  })
  .meta({ id: 'SyncRequest' });

export const SyncResponseSchema = z
  .object({
    listing_id: z.uuid(),
    version: z.string(),
    tag: z.string(),
    commit_sha: z.string(),
    state: z.literal('queued'),
    release_log_url: z.string(),
  })
  .meta({ id: 'SyncResponse' });

export const ReleaseLogSchema = z
  .object({
    owner: z.string(),
    slug: z.string(),
    status: z
      .enum(['published', 'retired'])
      .meta({ description: '`retired`: no longer sold; the log stays' }),
    version_on_sale: z.string().nullable().meta({
      description:
        'The one version sold: the newest release whose scan passed; null once retired. Older versions cannot be bought; a wallet re-fetches any it owns',
    }),
    releases: z.array(ReleaseSchema).meta({
      description:
        'Every release, failing and pending ones too, newest first; each entry carries the listing’s prices in force now, and first_on_sale what it was first sold at',
    }),
    next_cursor: z.string().nullable(),
  })
  .meta({ id: 'ReleaseLog' });

/** The creator's own log of one listing (GET /api/listings/{id}/releases): drafts too, with scan reports. */
export const ListingReleasePageSchema = z
  .object({
    releases: z.array(ListingReleaseSchema).meta({
      description: 'Every release, pending, failing and refused ones too, newest version first, 50 per page',
    }),
    next_cursor: z.string().nullable(),
  })
  .meta({ id: 'ListingReleasePage' });

export const ListingReleasesQuerySchema = z.strictObject({
  cursor: singleLineText()
    .max(512)
    .optional()
    .meta({ description: 'Opaque; the `next_cursor` of the previous page' }),
});

export const OwnerSlugParamsSchema = z.strictObject({ owner: z.string().max(64), slug: z.string().max(64) });

/** The cumulative change an update offer carries (releases/update-summary.ts). */
export const UpdateChangesSchema = z
  .object({
    from: z.string().meta({ description: 'The version the wallet holds (the update starts here)' }),
    to: z.string().meta({ description: 'The version on sale' }),
    method: z.literal('composed').meta({
      description:
        "Composed from each release's stored diff (against its predecessor) and scan report; see docs/DECISIONS.md",
    }),
    complete: z.boolean().meta({
      description:
        'false when a release in the range has no diff summary or scan report (refused before inspection), so the totals may miss its changes',
    }),
    releases: z
      .number()
      .int()
      .meta({ description: 'How many releases lie after `from` up to `to`, failing ones included' }),
    failing_versions: z.array(z.string()).meta({
      description:
        'Releases in the range that did not pass their scan (never sold; their changes may still be in `to`)',
    }),
    // From `from` to `to`: counts are sums over every release in the range (upper bounds: a file
    // touched by two releases counts twice); components_touched is the union.
    diff_summary: DiffSummarySchema,
    capabilities_gained: z
      .object({
        hosts: z
          .array(z.string())
          .meta({ description: 'Non-local hosts contacted that `from` did not contact' }),
        tools: z.array(z.string()),
        runs: z.array(z.string()),
        env: z.array(z.string()).meta({ description: 'Environment variables read' }),
        install_runs: z.boolean().meta({ description: 'true when install scripts appeared since `from`' }),
      })
      .meta({
        description:
          'Capabilities any release after `from` up to `to` reports that `from` did not, failing releases included (conservative: one added and later removed is still listed)',
      }),
  })
  .meta({ id: 'UpdateChanges' });
