import { z } from 'zod';
import { DsseEnvelopeSchema } from '../attestations/schemas.js';
import type { App, AppContext } from '../context.js';
import { creatorOf, requireApiKey } from '../identity/guard.js';
import { ListingIdParamsSchema } from '../listings/schemas.js';
import { listingRelease } from '../listings/views.js';
import { sendPrebuilt } from '../platform/http/prebuilt.js';
import { routeOptions } from '../platform/http/route-options.js';
import { errorResponses } from '../platform/http/schemas.js';
import { rateLimitConfig } from '../platform/limits/rate-limit.js';
import { syncListing } from './cut/sync.js';
import { handleGitHubDelivery } from './github-webhooks.js';
import {
  ListingReleasePageSchema,
  ListingReleasesQuerySchema,
  OwnerSlugParamsSchema,
  ReleaseLogSchema,
  SyncRequestSchema,
  SyncResponseSchema,
} from './schemas.js';
import { ownReleaseLog, publicReleaseLog, releaseAttestation } from './service.js';
import { releaseFeedUrl, shownRelease } from './views.js';

/**
 * Under `/api`: cutting a version of a creator's listing now, the creator's own release log of a
 * listing, and the public release log.
 */
export function releaseRoutes(ctx: AppContext) {
  return async (app: App) => {
    const creatorRoute = routeOptions(ctx.config, { rateLimit: 'creator', tag: 'creator' });

    app.post(
      '/listings/:id/sync',
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
              'suspended',
              'repo_too_large',
              'public_repo',
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
      '/listings/:id/releases',
      creatorRoute({
        guard: requireApiKey(ctx, 'listings:read'),
        summary:
          "Every release of one of the caller's listings (drafts too), failing and pending ones included, newest first, each with its full scan report",
        params: ListingIdParamsSchema,
        querystring: ListingReleasesQuerySchema,
        response: {
          200: ListingReleasePageSchema,
          ...errorResponses(
            'invalid_request',
            'invalid_key',
            'insufficient_scope',
            'not_found',
            'rate_limited',
          ),
        },
      }),
      async (request, reply) => {
        // The scan reports say where a secret sits: kept by no cache.
        reply.header('cache-control', 'private, no-store');
        const page = await ownReleaseLog(
          ctx.database.db,
          creatorOf(request).id,
          request.params.id,
          request.query.cursor,
        );
        return {
          releases: page.releases.map((row) => listingRelease(shownRelease(row, page.prices), true)),
          next_cursor: page.nextCursor,
        };
      },
    );
    app.get(
      '/v/:owner/:slug/releases',
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
        const { owner, slug } = request.params;
        const { doc } = await publicReleaseLog(ctx, owner, slug, request.query.cursor);
        // The same log as an Atom feed, for feed readers (RFC 8288 alternate).
        reply.header(
          'link',
          `<${releaseFeedUrl(ctx.config.baseUrl, owner, slug)}>; rel="alternate"; type="application/atom+xml"`,
        );
        return sendPrebuilt(request, reply, doc, 'public, max-age=30');
      },
    );

    app.get(
      '/v/:owner/:slug/releases/:version/attestation',
      {
        config: rateLimitConfig(ctx.config, 'public'),
        schema: {
          tags: ['public'],
          summary:
            "A release's signed attestation: an in-toto Statement v1 in a DSSE envelope, Ed25519 (docs/ATTESTATIONS.md)",
          params: OwnerSlugParamsSchema.extend({
            version: z
              .string()
              .max(32)
              .meta({ examples: ['1.2.0'] }),
          }),
          response: {
            200: DsseEnvelopeSchema,
            304: z.null().meta({ description: 'Not modified (If-None-Match matched the ETag)' }),
            ...errorResponses('invalid_request', 'not_found', 'rate_limited'),
          },
        },
      },
      async (request, reply) => {
        const { owner, slug, version } = request.params;
        const doc = await releaseAttestation(ctx.database.db, owner, slug, version);
        // The statement never changes; a rotation may add a signature, so caches revalidate daily.
        return sendPrebuilt(request, reply, doc, 'public, max-age=86400');
      },
    );

    await app.register(githubWebhookRoute(ctx));
  };
}

/** Largest delivery read: tag events carry no commits; GitHub's own cap is 25 MB. */
const WEBHOOK_BODY_LIMIT_BYTES = 1024 * 1024;

/**
 * `POST /api/github/webhooks`, the GitHub App's webhook URL. Its own plugin, so that only here a
 * JSON body is kept as the exact bytes GitHub signed.
 */
function githubWebhookRoute(ctx: AppContext) {
  return async (app: App) => {
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => {
      done(null, body);
    });
    app.post(
      '/github/webhooks',
      {
        config: rateLimitConfig(ctx.config, 'public'),
        bodyLimit: WEBHOOK_BODY_LIMIT_BYTES,
        schema: {
          tags: ['internal'],
          summary: 'GitHub App webhook deliveries (signed with the App’s webhook secret)',
          headers: z.object({
            'x-github-event': z.string().max(100).optional(),
            'x-github-delivery': z.string().max(100).optional(),
            'x-hub-signature-256': z.string().max(200).optional(),
          }),
          response: {
            200: z.object({
              handled: z.boolean(),
              duplicate: z.boolean().optional().meta({
                description: 'A repeat: this delivery id, or the same event and body, was handled already',
              }),
              duplicate_of: z.string().optional().meta({ description: 'The delivery it repeats' }),
            }),
            ...errorResponses('invalid_request', 'invalid_signature', 'not_found', 'rate_limited'),
          },
        },
      },
      async (request, reply) => {
        reply.header('cache-control', 'no-store');
        return handleGitHubDelivery(ctx, {
          event: request.headers['x-github-event'],
          deliveryId: request.headers['x-github-delivery'],
          signature: request.headers['x-hub-signature-256'],
          body: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
        });
      },
    );
  };
}
