import { encodePaymentResponseHeader } from '@x402/core/http';
import { z } from 'zod';
import type { App, AppContext } from '../context.js';
import { findListingById } from '../listings/store.js';
import { AppError } from '../platform/errors.js';
import { ErrorSchema, errorResponses } from '../platform/http-schemas.js';
import { MicroUsdc } from '../platform/money.js';
import { rateLimitConfig } from '../platform/rate-limit.js';
import { OwnerSlugParams } from '../public/schemas.js';
import { openArtifact, publishedRelease } from '../releases/service.js';
import { buyLatest } from './buy.js';
import { readDownloadToken } from './grants.js';
import { fetchOwnedVersion, listEntitlements, versionStatus } from './holder.js';
import { encodeHeaderJson } from './payment-required.js';

export const GrantSchema = z
  .object({
    download_url: z.string().meta({ description: 'Signed URL, valid 5 minutes' }),
    expires_at: z.iso.datetime(),
    version: z.string(),
    artifact_sha256: z.string(),
    size_bytes: z.number().int(),
    kind: z.enum(['new', 'update', 'free', 'owned']),
    purchase_id: z.string().optional(),
    transaction: z.string().optional().meta({ description: 'Settlement transaction hash' }),
  })
  .meta({ id: 'ResourceGrant' });

export const PaymentRequiredSchema = z
  .looseObject({
    x402Version: z.literal(2),
    resource: z.looseObject({ url: z.string(), description: z.string(), mimeType: z.string() }),
    accepts: z.array(z.looseObject({})),
    extra: z.looseObject({ kind: z.enum(['new', 'update']), version: z.string(), quote_id: z.string() }),
    extensions: z.looseObject({}),
  })
  .meta({
    id: 'PaymentRequired',
    description: "SPEC.md's payment-required body; also base64 in PAYMENT-REQUIRED",
  });

const BuyHeaders = z.looseObject({
  'payment-signature': z.string().optional().meta({ description: 'base64 x402 v2 payment payload' }),
  'x-quote-id': z.string().optional().meta({ description: 'extra.quote_id of the 402 being paid' }),
  'x-wallet-signature': z.string().optional(),
});
const WalletHeaders = z.looseObject({ 'x-wallet-signature': z.string().optional() });

export const VersionStatusSchema = z
  .object({
    owner: z.string(),
    slug: z.string(),
    status: z.enum(['published', 'retired']),
    for_sale: z.boolean(),
    version: z.string(),
    tag: z.string(),
    artifact_sha256: z.string(),
    published_at: z.iso.datetime(),
    price_micro: MicroUsdc,
    update_price_micro: MicroUsdc,
    resource_endpoint: z.string(),
    scan: z
      .object({ blocking: z.number().int(), disclosed: z.number().int(), review: z.number().int() })
      .optional()
      .meta({ description: "The latest release's trust report in three numbers; absent when there is none" }),
    owned: z.boolean().optional(),
    entitled: z.boolean().optional(),
    price_kind: z.enum(['owned', 'new', 'update', 'free']).optional(),
  })
  .meta({ id: 'VersionStatus' });

const EntitlementsSchema = z
  .object({
    wallet: z.string(),
    items: z.array(
      z.object({
        owner: z.string(),
        slug: z.string(),
        version: z.string(),
        kind: z.enum(['new', 'update']),
        all_versions: z.boolean(),
        purchase_id: z.string(),
        transaction: z.string().nullable(),
        acquired_at: z.iso.datetime(),
        fetch_url: z.string(),
      }),
    ),
    next_cursor: z.string().nullable(),
  })
  .meta({ id: 'Entitlements' });

export function registerPaymentRoutes(app: App, ctx: AppContext): void {
  const limited = rateLimitConfig(ctx.config, 'public');

  app.get(
    '/api/r/:owner/:slug',
    {
      config: limited,
      schema: {
        tags: ['public'],
        summary: 'Buy or fetch the latest release: 402 with the price, then pay with PAYMENT-SIGNATURE',
        params: OwnerSlugParams,
        headers: BuyHeaders,
        security: [{}, { paymentSignature: [] }, { walletSignature: [] }],
        response: {
          200: GrantSchema,
          ...errorResponses(
            'invalid_request',
            'authorization_mismatch',
            'invalid_signature',
            'sanctioned_counterparty',
            'not_found',
            'replay',
            'price_changed',
            'retired',
            'rate_limited',
            'blocked_jurisdiction',
            'settlement_timeout',
          ),
          402: z.union([PaymentRequiredSchema, ErrorSchema]).meta({
            description:
              'Payment required (the payment-required body), or `insufficient_balance`, `expired_authorization`, `settlement_pending`',
          }),
        },
      },
    },
    async (request, reply) => {
      const { owner, slug } = request.params;
      const result = await buyLatest(ctx, {
        owner,
        slug,
        paymentSignature: request.headers['payment-signature'],
        quoteId: request.headers['x-quote-id'],
        walletSignature: request.headers['x-wallet-signature'],
        source: 'http',
        headers: request.headers,
      });
      reply.header('cache-control', 'no-store');
      if (result.status === 'payment_required') {
        reply.code(402).header('payment-required', encodeHeaderJson(result.paymentRequired));
        return result.paymentRequired as unknown as z.infer<typeof PaymentRequiredSchema>;
      }
      if (result.paymentResponse) {
        reply.header('payment-response', encodePaymentResponseHeader(result.paymentResponse));
      }
      return result.grant;
    },
  );

  app.get(
    '/api/r/:owner/:slug/v/:version',
    {
      config: limited,
      schema: {
        tags: ['public'],
        summary: 'Re-fetch a version the signing wallet owns, free; works after the listing is retired',
        params: OwnerSlugParams.extend({ version: z.string().meta({ description: 'X.Y.Z' }) }),
        headers: WalletHeaders,
        security: [{ walletSignature: [] }],
        response: {
          200: GrantSchema,
          ...errorResponses(
            'invalid_signature',
            'not_entitled',
            'not_found',
            'rate_limited',
            'blocked_jurisdiction',
          ),
        },
      },
    },
    async (request, reply) => {
      const grant = await fetchOwnedVersion(ctx, {
        ...request.params,
        walletSignature: request.headers['x-wallet-signature'],
        headers: request.headers,
      });
      reply.header('cache-control', 'no-store');
      return grant;
    },
  );

  app.get(
    '/api/v/:owner/:slug',
    {
      config: limited,
      schema: {
        tags: ['public'],
        summary:
          'Latest version and prices; with X-Wallet-Signature also owned, entitled and price_kind (never from ?address=)',
        params: OwnerSlugParams,
        headers: WalletHeaders,
        querystring: z.looseObject({}),
        security: [{}, { walletSignature: [] }],
        response: {
          200: VersionStatusSchema,
          ...errorResponses('invalid_signature', 'not_found', 'rate_limited'),
        },
      },
    },
    async (request, reply) => {
      const walletSignature = request.headers['x-wallet-signature'];
      const status = await versionStatus(ctx, { ...request.params, walletSignature });
      // Wallet-aware answers are the caller's own; the anonymous one may be cached briefly.
      reply
        .header('cache-control', walletSignature === undefined ? 'public, max-age=30' : 'private, no-store')
        .header('vary', 'X-Wallet-Signature');
      return status;
    },
  );

  app.get(
    '/api/entitlements',
    {
      config: limited,
      schema: {
        tags: ['public'],
        summary: 'Everything the signing wallet owns, newest first, paged with next_cursor',
        headers: WalletHeaders,
        querystring: z.object({
          cursor: z.string().max(512).optional(),
          limit: z.coerce.number().int().min(1).max(100).optional(),
        }),
        security: [{ walletSignature: [] }],
        response: {
          200: EntitlementsSchema,
          ...errorResponses('invalid_request', 'invalid_signature', 'rate_limited'),
        },
      },
    },
    async (request, reply) => {
      const page = await listEntitlements(ctx, {
        walletSignature: request.headers['x-wallet-signature'],
        cursor: request.query.cursor,
        limit: request.query.limit,
      });
      reply.header('cache-control', 'private, no-store');
      return page;
    },
  );

  app.get(
    '/api/download/:token',
    {
      config: limited,
      schema: {
        tags: ['public'],
        summary: 'The zip of a grant (the download_url of a 200 from the buy routes); valid 5 minutes',
        params: z.object({ token: z.string().regex(/^[A-Za-z0-9._-]{1,2048}$/, 'not a download token') }),
        response: {
          200: z.any().meta({ description: 'application/zip, streamed' }),
          ...errorResponses('not_entitled', 'not_found', 'rate_limited'),
        },
      },
    },
    async (request, reply) => {
      const { listingId, version } = readDownloadToken(ctx, request.params.token);
      const [release, listing] = await Promise.all([
        publishedRelease(ctx.database.db, listingId, version),
        findListingById(ctx.database.db, listingId),
      ]);
      if (!release || !listing) throw new AppError('not_found', { message: 'No such download' });
      const { stream, sizeBytes } = await openArtifact(ctx, release);
      reply
        .header('content-type', 'application/zip')
        .header('content-length', String(sizeBytes))
        // The zip's own top folder is `<slug>/` (identical trees, identical zips); the name carries the version.
        .header('content-disposition', `attachment; filename="${listing.slug}-${release.version}.zip"`)
        .header('x-artifact-sha256', release.artifactSha256)
        .header('cache-control', 'private, no-store');
      return reply.send(stream);
    },
  );
}
