import type { App, AppContext } from '../context.js';
import { DEFAULT_BRANCH } from '../git/repos.js';
import type { RepoRef } from '../github/client.js';
import { creatorOf, requireApiKey } from '../identity/guard.js';
import { AppError, type ErrorCode } from '../platform/errors.js';
import { BODY_LIMITS } from '../platform/http/json-body.js';
import { routeOptions } from '../platform/http/route-options.js';
import { errorResponses } from '../platform/http/schemas.js';
import { deployKeyFingerprint } from './deploy-keys.js';
import { claimableRepositories } from './github-repositories.js';
import { commitLicence } from './licence.js';
import {
  CreateListingRequestSchema,
  GitHubRepositoriesSchema,
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
import { hostKeys } from './ssh-host.js';
import { type ListingCut, listingBody, type ReleaseHeads, type TagChange } from './views.js';

const DEFAULT_PAGE_SIZE = 50;

/**
 * What the listing routes need of releases/, which may import listings/ but not the reverse:
 * `listingReleases` (releases/listing-releases.ts) supplies it when app.ts registers the plugin.
 */
export interface ListingReleases {
  /** For each listing id, its head releases. */
  heads(listings: Listing[]): Promise<Map<string, ReleaseHeads>>;
  /** Versions claimed without a release, newest first. */
  unfinishedCuts(listingId: string): Promise<ListingCut[]>;
  /** Released tags moved or deleted on GitHub since, newest first. */
  tagChanges(listingId: string): Promise<TagChange[]>;
  /** Publishes the caller's draft (the release verdicts decide whether it may be). */
  publish(creatorId: string, listingId: string): Promise<Listing>;
}

/**
 * The creator's listings, under `/api/listings`: every route has the creator rate limit, a key
 * guard (`listings:read` or `listings:write`), and the errors of a key route.
 */
export function listingRoutes(ctx: AppContext, releases: ListingReleases) {
  return async (app: App) => {
    const route = routeOptions(ctx.config, { rateLimit: 'creator', tag: 'creator' });
    // A creator's listings are theirs alone: no answer, error or not, may be kept by a cache.
    app.addHook('onRequest', async (_request, reply) => {
      reply.header('cache-control', 'no-store');
    });
    const read = requireApiKey(ctx, 'listings:read');
    const write = requireApiKey(ctx, 'listings:write');
    /** The route's own error codes, with those of every key route. */
    const errors = (...codes: ErrorCode[]) =>
      errorResponses('invalid_request', 'invalid_key', 'insufficient_scope', ...codes, 'rate_limited');

    /** One listing with its head releases, as every single-listing answer returns it. */
    const fullView = async (listing: Listing, withScanReport: boolean) => {
      const heads = (await releases.heads([listing])).get(listing.id)!;
      return listingBody(ctx.config, {
        listing,
        ...heads,
        hostKeys: await hostKeys(ctx),
        withScanReport,
        cuts: await releases.unfinishedCuts(listing.id),
        tagChanges: listing.source === 'github' ? await releases.tagChanges(listing.id) : undefined,
        deployKeyFingerprint:
          listing.source === 'hosted' ? await deployKeyFingerprint(ctx.database.db, listing.id) : undefined,
      });
    };

    app.post(
      '',
      route({
        guard: write,
        summary:
          'Create a draft listing; hosted: provisions the repository and adds the deploy key; github: checks the App reaches the private repository',
        body: CreateListingRequestSchema,
        bodyLimit: BODY_LIMITS.large,
        response: {
          201: ListingSchema,
          ...errors('not_found', 'too_many_unpublished', 'public_repo', 'suspended'),
        },
      }),
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
            : {
                source: 'github',
                slug: body.slug,
                installationId: body.installation_id,
                repo: githubRepoRef(body),
                ...fields,
              },
        );
        reply.code(201);
        return fullView(listing, true);
      },
    );

    app.get(
      '',
      route({
        guard: read,
        summary: "The caller's listings, newest first",
        querystring: ListQuerySchema,
        response: { 200: ListingListSchema, ...errors() },
      }),
      async (request) => {
        const creator = creatorOf(request);
        const page = await listOwnListings(ctx.database.db, creator.id, {
          limit: request.query.limit ? Number(request.query.limit) : DEFAULT_PAGE_SIZE,
          cursor: request.query.cursor,
        });
        const heads = await releases.heads(page.listings);
        const keys = await hostKeys(ctx);
        return {
          listings: page.listings.map((listing) =>
            listingBody(ctx.config, { listing, ...heads.get(listing.id)!, hostKeys: keys }),
          ),
          next_cursor: page.nextCursor,
        };
      },
    );

    app.get(
      '/:id',
      route({
        guard: read,
        summary: "One of the caller's listings, with the full scan report of its head releases",
        params: ListingIdParamsSchema,
        response: { 200: ListingSchema, ...errors('not_found') },
      }),
      async (request) => {
        const listing = await ownedListing(ctx.database.db, creatorOf(request).id, request.params.id);
        return fullView(listing, true);
      },
    );

    app.patch(
      '/:id',
      route({
        guard: write,
        summary: 'Change price, update price, description or trigger hint; prices apply to future purchases',
        params: ListingIdParamsSchema,
        body: UpdateListingRequestSchema,
        bodyLimit: BODY_LIMITS.large,
        response: { 200: ListingSchema, ...errors('not_found', 'retired') },
      }),
      async (request) => {
        const body = request.body;
        const listing = await updateOwnListing(ctx, creatorOf(request).id, request.params.id, {
          priceMicro: body.price_micro,
          updatePriceMicro: body.update_price_micro,
          description: body.description,
          triggerHint: body.trigger_hint,
        });
        return fullView(listing, true);
      },
    );

    app.delete(
      '/:id',
      route({
        guard: write,
        summary: 'Retire the listing (terminal); holders keep their versions, the release log stays',
        params: ListingIdParamsSchema,
        response: { 200: RetireResponseSchema, ...errors('not_found', 'retired') },
      }),
      async (request) => {
        const listing = await retireOwnListing(ctx, creatorOf(request).id, request.params.id);
        return {
          id: listing.id,
          status: 'retired' as const,
          retired_at: listing.retiredAt!.toISOString(),
          repository: listing.source === 'hosted' ? ('archived' as const) : ('none' as const),
        };
      },
    );

    app.put(
      '/:id/ssh-key',
      route({
        guard: write,
        summary: "Replace a hosted listing's deploy key; the old key stops working at once",
        params: ListingIdParamsSchema,
        body: SshKeyRequestSchema,
        bodyLimit: BODY_LIMITS.signed,
        response: { 200: ListingSchema, ...errors('not_found', 'retired') },
      }),
      async (request) => {
        const listing = await replaceDeployKey(
          ctx,
          creatorOf(request).id,
          request.params.id,
          request.body.ssh_public_key,
        );
        return fullView(listing, true);
      },
    );

    app.post(
      '/:id/publish',
      route({
        guard: write,
        summary: 'Publish a draft: it goes on sale at its latest passing release',
        params: ListingIdParamsSchema,
        response: {
          200: ListingSchema,
          ...errors(
            'not_found',
            'description_missing',
            'scan_failed',
            'derivative_of',
            'listing_not_ready',
            'retired',
            'suspended',
          ),
        },
      }),
      async (request) => {
        const listing = await releases.publish(creatorOf(request).id, request.params.id);
        return fullView(listing, true);
      },
    );

    app.post(
      '/:id/licence',
      route({
        guard: write,
        summary: 'Commit an allow-listed LICENSE to main of a hosted listing (pull before your next push)',
        params: ListingIdParamsSchema,
        body: LicenceRequestSchema,
        response: { 200: LicenceResponseSchema, ...errors('not_found', 'retired') },
      }),
      async (request) => {
        const result = await commitLicence(ctx, creatorOf(request).id, request.params.id, request.body.spdx);
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
  };
}

/**
 * Under `/api/github`: the repositories the caller can list from GitHub, for choosing one when
 * creating a `source: github` listing. A creator route like the listing routes.
 */
export function githubRepositoryRoutes(ctx: AppContext) {
  return async (app: App) => {
    const route = routeOptions(ctx.config, { rateLimit: 'creator', tag: 'creator' });
    app.get(
      '/repositories',
      route({
        guard: requireApiKey(ctx, 'listings:read'),
        summary:
          'The GitHub repositories whose .repo402 file names the caller, by installation, and how to add one; a bounded scan',
        response: {
          200: GitHubRepositoriesSchema,
          ...errorResponses('invalid_request', 'invalid_key', 'insufficient_scope', 'rate_limited'),
        },
      }),
      async (request, reply) => {
        const found = await claimableRepositories(ctx, creatorOf(request));
        // Names of the caller's repositories: no cache may keep them.
        reply.header('cache-control', 'no-store');
        return {
          enabled: found.enabled,
          install_url: found.installUrl,
          claim: found.claim,
          installations: found.installations.map((installation) => ({
            installation_id: installation.installationId,
            account: installation.account,
            repositories: installation.repositories.map((repo) => ({
              github_repo_id: repo.githubRepoId,
              full_name: repo.fullName,
              private: repo.private,
              default_branch: repo.defaultBranch,
              listing_id: repo.listingId,
              in_use: repo.inUse,
            })),
          })),
          truncated: found.truncated,
        };
      },
    );
  };
}

/** Rail A names its repository by `github_repo_id` or by `repo` (`owner/name`): exactly one. */
function githubRepoRef(body: { github_repo_id?: number; repo?: string }): RepoRef {
  if ((body.github_repo_id === undefined) === (body.repo === undefined)) {
    throw AppError.invalid([
      { field: 'repo', reason: 'give github_repo_id or repo (owner/name), one of them' },
    ]);
  }
  return body.github_repo_id !== undefined ? { id: body.github_repo_id } : { fullName: body.repo! };
}
