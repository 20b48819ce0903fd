import type { App, AppContext } from '../context.js';
import { loadHostKeys } from '../git/host-keys.js';
import { DEFAULT_BRANCH } from '../git/repos.js';
import { creatorOf, requireApiKey } from '../identity/guard.js';
import { errorResponses } from '../platform/http-schemas.js';
import { rateLimitConfig } from '../platform/rate-limit.js';
import { headReleases, unfinishedCuts } from '../releases/releases.js';
import { deployKeyFingerprint } from './deploy-keys.js';
import { commitLicence } from './licence.js';
import { publishOwnListing } from './publish.js';
import {
  CreateListingRequestSchema,
  LicenceRequestSchema,
  LicenceResponseSchema,
  ListingIdParamsSchema,
  ListingListSchema,
  ListingSchema,
  ListQuerySchema,
  RetireResponseSchema,
  SshKeyRequestSchema,
  UpdateListingRequestSchema,
} from './schemas.js';
import {
  createListing,
  type Listing,
  listOwnListings,
  ownedListing,
  replaceDeployKey,
  retireOwnListing,
  updateOwnListing,
} from './service.js';
import { listingBody } from './views.js';

const DEFAULT_PAGE_SIZE = 50;

export function registerListingRoutes(app: App, ctx: AppContext): void {
  const config = rateLimitConfig(ctx.config, 'creator');
  const read = requireApiKey(ctx, 'listings:read');
  const write = requireApiKey(ctx, 'listings:write');

  /** One listing with its head releases, as every single-listing answer returns it. */
  const fullView = async (listing: Listing, withScanReport: boolean) => {
    const heads = (await headReleases(ctx.database.db, [listing.id])).get(listing.id)!;
    return listingBody(ctx.config, {
      listing,
      ...heads,
      hostKeys: await loadHostKeys(ctx.config.dataDir),
      withScanReport,
      cuts: await unfinishedCuts(ctx.database.db, listing.id),
      deployKeyFingerprint:
        listing.source === 'hosted' ? await deployKeyFingerprint(ctx.database.db, listing.id) : undefined,
    });
  };

  app.post(
    '/api/listings',
    {
      config,
      onRequest: write,
      schema: {
        tags: ['creator'],
        summary: 'Create a draft listing; hosted: provisions the repository and adds the deploy key',
        body: CreateListingRequestSchema,
        response: {
          201: ListingSchema,
          ...errorResponses(
            'invalid_request',
            'invalid_key',
            'insufficient_scope',
            'too_many_unpublished',
            'rate_limited',
          ),
        },
      },
    },
    async (request, reply) => {
      const creator = creatorOf(request);
      const body = request.body;
      const fields = {
        priceMicro: body.price_micro,
        updatePriceMicro: body.update_price_micro,
        description: body.description,
        triggerHint: body.trigger_hint,
      };
      const listing = await createListing(
        ctx,
        creator,
        body.source === 'hosted'
          ? { source: 'hosted', slug: body.slug, sshPublicKey: body.ssh_public_key, ...fields }
          : { source: 'github', slug: body.slug, ...fields },
      );
      reply.code(201).header('cache-control', 'no-store');
      return fullView(listing, true);
    },
  );

  app.get(
    '/api/listings',
    {
      config,
      onRequest: read,
      schema: {
        tags: ['creator'],
        summary: "The caller's listings, newest first",
        querystring: ListQuerySchema,
        response: {
          200: ListingListSchema,
          ...errorResponses('invalid_request', 'invalid_key', 'insufficient_scope', 'rate_limited'),
        },
      },
    },
    async (request, reply) => {
      const creator = creatorOf(request);
      const page = await listOwnListings(ctx.database.db, creator.id, {
        limit: request.query.limit ? Number(request.query.limit) : DEFAULT_PAGE_SIZE,
        cursor: request.query.cursor,
      });
      const heads = await headReleases(
        ctx.database.db,
        page.listings.map((listing) => listing.id),
      );
      const hostKeys = await loadHostKeys(ctx.config.dataDir);
      reply.header('cache-control', 'no-store');
      return {
        listings: page.listings.map((listing) =>
          listingBody(ctx.config, { listing, ...heads.get(listing.id)!, hostKeys }),
        ),
        next_cursor: page.nextCursor,
      };
    },
  );

  app.get(
    '/api/listings/:id',
    {
      config,
      onRequest: read,
      schema: {
        tags: ['creator'],
        summary: "One of the caller's listings, with the full scan report of its head releases",
        params: ListingIdParamsSchema,
        response: {
          200: ListingSchema,
          ...errorResponses(
            'invalid_request',
            'invalid_key',
            'insufficient_scope',
            'not_found',
            'rate_limited',
          ),
        },
      },
    },
    async (request, reply) => {
      const listing = await ownedListing(ctx.database.db, creatorOf(request).id, request.params.id);
      reply.header('cache-control', 'no-store');
      return fullView(listing, true);
    },
  );

  app.patch(
    '/api/listings/:id',
    {
      config,
      onRequest: write,
      schema: {
        tags: ['creator'],
        summary: 'Change price, update price, description or trigger hint; prices apply to future purchases',
        params: ListingIdParamsSchema,
        body: UpdateListingRequestSchema,
        response: {
          200: ListingSchema,
          ...errorResponses(
            'invalid_request',
            'invalid_key',
            'insufficient_scope',
            'not_found',
            'retired',
            'rate_limited',
          ),
        },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const listing = await updateOwnListing(ctx, creatorOf(request).id, request.params.id, {
        priceMicro: body.price_micro,
        updatePriceMicro: body.update_price_micro,
        description: body.description,
        triggerHint: body.trigger_hint,
      });
      reply.header('cache-control', 'no-store');
      return fullView(listing, true);
    },
  );

  app.delete(
    '/api/listings/:id',
    {
      config,
      onRequest: write,
      schema: {
        tags: ['creator'],
        summary: 'Retire the listing (terminal); holders keep their versions, the release log stays',
        params: ListingIdParamsSchema,
        response: {
          200: RetireResponseSchema,
          ...errorResponses(
            'invalid_request',
            'invalid_key',
            'insufficient_scope',
            'not_found',
            'retired',
            'rate_limited',
          ),
        },
      },
    },
    async (request, reply) => {
      const listing = await retireOwnListing(ctx, creatorOf(request).id, request.params.id);
      reply.header('cache-control', 'no-store');
      return {
        id: listing.id,
        status: 'retired' as const,
        retired_at: listing.retiredAt!.toISOString(),
        repository: listing.source === 'hosted' ? ('archived' as const) : ('none' as const),
      };
    },
  );

  app.put(
    '/api/listings/:id/ssh-key',
    {
      config,
      onRequest: write,
      schema: {
        tags: ['creator'],
        summary: "Replace a hosted listing's deploy key; the old key stops working at once",
        params: ListingIdParamsSchema,
        body: SshKeyRequestSchema,
        response: {
          200: ListingSchema,
          ...errorResponses(
            'invalid_request',
            'invalid_key',
            'insufficient_scope',
            'not_found',
            'retired',
            'rate_limited',
          ),
        },
      },
    },
    async (request, reply) => {
      const listing = await replaceDeployKey(
        ctx,
        creatorOf(request).id,
        request.params.id,
        request.body.ssh_public_key,
      );
      reply.header('cache-control', 'no-store');
      return fullView(listing, true);
    },
  );

  app.post(
    '/api/listings/:id/publish',
    {
      config,
      onRequest: write,
      schema: {
        tags: ['creator'],
        summary: 'Publish a draft: it goes on sale at its latest passing release',
        params: ListingIdParamsSchema,
        response: {
          200: ListingSchema,
          ...errorResponses(
            'invalid_request',
            'invalid_key',
            'insufficient_scope',
            'not_found',
            'description_missing',
            'scan_failed',
            'derivative_of',
            'listing_not_ready',
            'retired',
            'rate_limited',
          ),
        },
      },
    },
    async (request, reply) => {
      const listing = await publishOwnListing(ctx, creatorOf(request).id, request.params.id);
      reply.header('cache-control', 'no-store');
      return fullView(listing, true);
    },
  );

  app.post(
    '/api/listings/:id/licence',
    {
      config,
      onRequest: write,
      schema: {
        tags: ['creator'],
        summary: 'Commit an allow-listed LICENSE to main of a hosted listing (pull before your next push)',
        params: ListingIdParamsSchema,
        body: LicenceRequestSchema,
        response: {
          200: LicenceResponseSchema,
          ...errorResponses(
            'invalid_request',
            'invalid_key',
            'insufficient_scope',
            'not_found',
            'retired',
            'rate_limited',
          ),
        },
      },
    },
    async (request, reply) => {
      const result = await commitLicence(ctx, creatorOf(request).id, request.params.id, request.body.spdx);
      reply.header('cache-control', 'no-store');
      return {
        listing_id: result.listingId,
        spdx: result.spdx,
        branch: DEFAULT_BRANCH,
        path: 'LICENSE' as const,
        commit_sha: result.commitSha,
        committed: result.created,
        next_step: `Run \`git pull\` before your next push: ${DEFAULT_BRANCH} now has this commit, and pushes that would overwrite it are refused.`,
      };
    },
  );
}
