import { z } from 'zod';
import type { App, AppContext } from '../context.js';
import { creatorOf, requireApiKey } from '../identity/guard.js';
import { ListingIdParamsSchema } from '../listings/schemas.js';
import { errorResponses } from '../platform/http-schemas.js';
import { rateLimitConfig } from '../platform/rate-limit.js';
import { releaseLog } from './release-log.js';
import { syncListing } from './sync.js';
import { ReleaseSchema } from './views.js';

const SyncRequestSchema = z
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

const SyncResponseSchema = z
  .object({
    listing_id: z.uuid(),
    version: z.string(),
    tag: z.string(),
    commit_sha: z.string(),
    state: z.literal('queued'),
    release_log_url: z.string(),
  })
  .meta({ id: 'SyncResponse' });

const ReleaseLogSchema = z
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

const OwnerSlugParamsSchema = z.strictObject({ owner: z.string().max(64), slug: z.string().max(64) });

export function registerReleaseRoutes(app: App, ctx: AppContext): void {
  app.post(
    '/api/listings/:id/sync',
    {
      config: rateLimitConfig(ctx.config, 'creator'),
      onRequest: requireApiKey(ctx, 'releases:write'),
      schema: {
        tags: ['creator'],
        summary: 'Cut a version now: the newest uncut tag, a tagged ref, or a ref with a version',
        params: ListingIdParamsSchema,
        body: SyncRequestSchema.nullish().meta({
          description: 'Optional; no body cuts the newest uncut vX.Y.Z tag',
        }),
        response: {
          202: SyncResponseSchema,
          ...errorResponses(
            'invalid_request',
            'invalid_key',
            'insufficient_scope',
            'not_found',
            'version_exists',
            'retired',
            'repo_too_large',
            'rate_limited',
          ),
        },
      },
    },
    async (request, reply) => {
      const { cut, owner, slug } = await syncListing(
        ctx,
        creatorOf(request).id,
        request.params.id,
        request.body ?? {},
      );
      reply.code(202).header('cache-control', 'no-store');
      return {
        listing_id: cut.listingId,
        version: cut.version,
        tag: cut.tag,
        commit_sha: cut.commitSha,
        state: 'queued' as const,
        release_log_url: `${ctx.config.baseUrl}/api/v/${owner}/${slug}/releases`,
      };
    },
  );

  app.get(
    '/api/v/:owner/:slug/releases',
    {
      config: rateLimitConfig(ctx.config, 'public'),
      schema: {
        tags: ['public'],
        summary: 'The release log: every release, failing ones too, newest first',
        params: OwnerSlugParamsSchema,
        querystring: z.strictObject({ cursor: z.string().max(512).optional() }),
        response: {
          200: ReleaseLogSchema,
          ...errorResponses('invalid_request', 'not_found', 'rate_limited'),
        },
      },
    },
    async (request, reply) => {
      const page = await releaseLog(
        ctx.database.db,
        request.params.owner,
        request.params.slug,
        request.query.cursor,
      );
      reply.header('cache-control', 'public, max-age=30');
      return {
        owner: page.owner,
        slug: page.slug,
        status: page.status,
        releases: page.releases,
        next_cursor: page.nextCursor,
      };
    },
  );
}
