import { z } from 'zod';
import { ReleaseSchema } from '../listings/schemas.js';

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

export const OwnerSlugParamsSchema = z.strictObject({ owner: z.string().max(64), slug: z.string().max(64) });
