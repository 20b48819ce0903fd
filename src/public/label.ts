import { z } from 'zod';
import type { App, AppContext } from '../context.js';
import { ManifestSchema } from '../listings/schemas.js';
import { sendPrebuilt } from '../platform/http/prebuilt.js';
import { errorResponses, OwnerSlugParams } from '../platform/http/schemas.js';
import { rateLimitConfig } from '../platform/limits/rate-limit.js';
import { findManifest } from './manifest.js';

/** Free and cacheable: shared caches may keep it a minute and serve it stale while revalidating. */
const LABEL_CACHE_CONTROL = 'public, max-age=60, stale-while-revalidate=300';

export function registerLabelRoute(app: App, ctx: AppContext): void {
  app.get(
    '/api/label/:owner/:slug',
    {
      schema: {
        tags: ['public'],
        summary: 'The manifest of a listing (free, cacheable, strong ETag)',
        params: OwnerSlugParams,
        response: {
          200: ManifestSchema,
          304: z.null().meta({ description: 'Not modified (If-None-Match matched the ETag)' }),
          ...errorResponses('not_found', 'rate_limited'),
        },
      },
      config: rateLimitConfig(ctx.config, 'public'),
    },
    async (request, reply) => {
      const { doc } = await findManifest(ctx, request.params.owner, request.params.slug);
      return sendPrebuilt(request, reply, doc, LABEL_CACHE_CONTROL);
    },
  );
}
