import { z } from 'zod';
import type { App, AppContext } from '../context.js';
import { isReservedHandle } from '../identity/handles.js';
import { errorResponses, OwnerSlugParams } from '../platform/http/schemas.js';
import { rateLimitConfig } from '../platform/limits/rate-limit.js';
import { findManifest, type ManifestView } from './manifest.js';

/** A public text document about one live listing (its page, its snippet), cached for a minute. */
export interface ListingDocument {
  path: string;
  summary: string;
  /** The media type, without its charset. */
  mediaType: string;
  headers?: Record<string, string>;
  render(view: ManifestView): string | Promise<string>;
}

export function registerListingDocument(app: App, ctx: AppContext, document: ListingDocument): void {
  // At the root, `/{owner}/{slug}` shares its first segment with the service's own paths (`/api`,
  // `/docs`): no handle can be one of those, so such a path is a route that does not exist.
  const atRoot = document.path.startsWith('/:owner/');
  // Rendered once per manifest view, to bytes: the view is itself cached until the listing changes
  // (or for a second), so a new one means something to show may have changed.
  const rendered = new WeakMap<ManifestView, Promise<Buffer>>();
  const render = (view: ManifestView): Promise<Buffer> => {
    let body = rendered.get(view);
    if (!body) {
      body = Promise.resolve(document.render(view)).then((text) => Buffer.from(text, 'utf8'));
      body.catch(() => rendered.delete(view));
      rendered.set(view, body);
    }
    return body;
  };
  app.get(
    document.path,
    {
      schema: {
        tags: ['public'],
        summary: document.summary,
        params: OwnerSlugParams,
        response: {
          200: z.string().meta({ description: document.mediaType }),
          ...errorResponses('not_found', 'rate_limited'),
        },
      },
      config: rateLimitConfig(ctx.config, 'public'),
    },
    async (request, reply) => {
      if (atRoot && isReservedHandle(request.params.owner)) return reply.callNotFound();
      const body = await render(await findManifest(ctx, request.params.owner, request.params.slug));
      return (
        reply
          .headers(document.headers ?? {})
          .header('cache-control', 'public, max-age=60')
          .type(`${document.mediaType}; charset=utf-8`)
          // The rendered text's bytes; the 200 schema documents them as the text they are.
          .send(body as unknown as string)
      );
    },
  );
}
