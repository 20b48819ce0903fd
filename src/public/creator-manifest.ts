import { z } from 'zod';
import type { App, AppContext } from '../context.js';
import { creatorOf, requireApiKey } from '../identity/guard.js';
import { ListingIdParamsSchema, ManifestSchema } from '../listings/schemas.js';
import { sendPrebuilt } from '../platform/http/prebuilt.js';
import { routeOptions } from '../platform/http/route-options.js';
import { errorResponses } from '../platform/http/schemas.js';
import { ownListingManifest } from './manifest.js';

/** The creator's own read: never kept by a shared cache, nor by the browser. */
const CREATOR_CACHE_CONTROL = 'private, no-store';

/**
 * `GET /api/listings/{id}/manifest`: the manifest buyers see (or will, once the draft is
 * published), for the creator's web app and agents. The document is the label's own, built by
 * the same code and cache (public/manifest.ts), so its bytes and ETag are the label's.
 */
export function registerCreatorManifestRoute(app: App, ctx: AppContext): void {
  const route = routeOptions(ctx.config, { rateLimit: 'creator', tag: 'creator' });
  app.get(
    '/api/listings/:id/manifest',
    route({
      guard: requireApiKey(ctx, 'listings:read'),
      summary:
        "The manifest of one of the caller's listings at its latest passing release, as GET /api/label serves it (a draft: as it will once published)",
      params: ListingIdParamsSchema,
      response: {
        200: ManifestSchema,
        304: z.null().meta({ description: 'Not modified (If-None-Match matched the ETag)' }),
        ...errorResponses(
          'invalid_request',
          'invalid_key',
          'insufficient_scope',
          'not_found',
          'listing_not_ready',
          'rate_limited',
        ),
      },
    }),
    async (request, reply) => {
      const { doc } = await ownListingManifest(ctx, creatorOf(request).id, request.params.id);
      return sendPrebuilt(request, reply, doc, CREATOR_CACHE_CONTROL);
    },
  );
}
