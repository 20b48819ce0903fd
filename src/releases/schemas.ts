import { z } from 'zod';
import { ListingReleaseSchema, ReleaseSchema } from '../listings/schemas.js';
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
    releases: z.array(ReleaseSchema),
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
