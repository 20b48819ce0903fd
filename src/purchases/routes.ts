import { encodePaymentResponseHeader } from '@x402/core/http';
import { z } from 'zod';
import type { App, AppContext } from '../context.js';
import { type NamedWallet, nextWalletChallenge, withWalletChallenge } from '../identity/wallet-signature.js';
import { sendJsonText, sendPrebuilt } from '../platform/http/prebuilt.js';
import { ErrorSchema, errorResponses, OwnerSlugParams } from '../platform/http/schemas.js';
import { requestCountry } from '../platform/limits/compliance.js';
import { rateLimitConfig } from '../platform/limits/rate-limit.js';
import { buyLatest } from './buy.js';
import {
  BuyHeaders,
  DownloadParams,
  EntitlementsQuery,
  EntitlementsSchema,
  GrantResponseSchema,
  PaymentRequiredSchema,
  VersionParams,
  VersionStatusResponseSchema,
  WalletAddressQuery,
  WalletHeaders,
} from './schemas.js';
import { fetchOwnedVersion, listEntitlements, openDownload } from './service.js';
import { publicVersionStatus, versionStatus } from './version-status.js';

/**
 * The buyer's routes, one plugin registered under `/api`: buy, re-fetch, version status,
 * entitlements and the download a grant names; every one is public and shares the `public` rate
 * limit. Routes read headers into plain values for the services and shape their answers into
 * headers. The creator's reads of sales, ledger and payouts are the earnings' (`src/earnings/`).
 */
export function buyerRoutes(ctx: AppContext) {
  return async (app: App): Promise<void> => {
    const limited = rateLimitConfig(ctx.config, 'public');
    const countryOf = (headers: Parameters<typeof requestCountry>[1]) =>
      requestCountry(ctx.config.compliance, headers);
    type WalletRequest = {
      headers: { 'x-wallet-signature'?: string };
      query: { address?: string | string[] };
    };
    /** The wallet a request names: its X-Wallet-Signature's address, else `?address=`. */
    const named = (request: WalletRequest): NamedWallet => {
      const { address } = request.query;
      return {
        header: request.headers['x-wallet-signature'],
        address: typeof address === 'string' ? address : undefined,
      };
    };
    /** A wallet's refusal, with a fresh challenge for the wallet the request names (`withWalletChallenge`). */
    const challenged =
      (request: WalletRequest) =>
      async (error: unknown): Promise<never> => {
        throw await withWalletChallenge(ctx, error, named(request));
      };
    /** An answer, with the challenge for the next call of the wallet the request names, if it names one. */
    const withNextChallenge = async <T extends object>(request: WalletRequest, answer: T) => {
      const challenge = await nextWalletChallenge(ctx, named(request));
      return challenge ? { ...answer, wallet_challenge: challenge } : answer;
    };

    app.get(
      '/r/:owner/:slug',
      {
        config: limited,
        schema: {
          tags: ['public'],
          summary: 'Buy or fetch the latest release: 402 with the price, then pay with PAYMENT-SIGNATURE',
          params: OwnerSlugParams,
          headers: BuyHeaders,
          querystring: WalletAddressQuery,
          security: [{}, { paymentSignature: [] }, { walletSignature: [] }],
          response: {
            200: GrantResponseSchema,
            ...errorResponses(
              'invalid_request',
              'authorization_mismatch',
              'invalid_signature',
              'sanctioned_counterparty',
              'not_found',
              'replay',
              'price_changed',
              'retired',
              'suspended',
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
        // Fields named one by one: adding fields after a spread takes V8's slow path (docs/DECISIONS.md, D-114).
        const result = await buyLatest(ctx, {
          owner: request.params.owner,
          slug: request.params.slug,
          paymentSignature: request.headers['payment-signature'],
          quoteId: request.headers['x-quote-id'],
          walletSignature: request.headers['x-wallet-signature'],
          source: 'http',
          country: countryOf(request.headers),
        }).catch(challenged(request));
        reply.header('cache-control', 'no-store');
        if (result.status === 'payment_required') {
          // Serialised once by the service (and, for anonymous callers, shared for up to a second).
          reply.code(402).header('payment-required', result.paymentRequired.header);
          return sendJsonText(reply, result.paymentRequired.json);
        }
        if (result.paymentResponse) {
          reply.header('payment-response', encodePaymentResponseHeader(result.paymentResponse));
        }
        // Built by grantFor as a Grant: stringified as it is, not parsed by the route's schema again.
        const grant = await withNextChallenge(request, result.grant);
        return sendJsonText(reply, Buffer.from(JSON.stringify(grant), 'utf8'));
      },
    );

    app.get(
      '/r/:owner/:slug/v/:version',
      {
        config: limited,
        schema: {
          tags: ['public'],
          summary: 'Re-fetch a version the signing wallet owns, free; works after the listing is retired',
          params: OwnerSlugParams.extend(VersionParams.shape),
          headers: WalletHeaders,
          querystring: WalletAddressQuery,
          security: [{ walletSignature: [] }],
          response: {
            200: GrantResponseSchema,
            ...errorResponses(
              'invalid_signature',
              'not_entitled',
              'not_found',
              'release_yanked',
              'rate_limited',
              'blocked_jurisdiction',
            ),
          },
        },
      },
      async (request, reply) => {
        const grant = await fetchOwnedVersion(ctx, {
          owner: request.params.owner,
          slug: request.params.slug,
          version: request.params.version,
          walletSignature: request.headers['x-wallet-signature'],
          country: countryOf(request.headers),
        }).catch(challenged(request));
        reply.header('cache-control', 'no-store');
        return withNextChallenge(request, grant);
      },
    );

    app.get(
      '/v/:owner/:slug',
      {
        config: limited,
        schema: {
          tags: ['public'],
          summary:
            'Latest version and prices; with X-Wallet-Signature also owned, entitled and price_kind (never from ?address=)',
          params: OwnerSlugParams,
          headers: WalletHeaders,
          querystring: WalletAddressQuery,
          security: [{}, { walletSignature: [] }],
          response: {
            200: VersionStatusResponseSchema,
            ...errorResponses('invalid_signature', 'not_found', 'rate_limited'),
          },
        },
      },
      async (request, reply) => {
        const walletSignature = request.headers['x-wallet-signature'];
        // CORS answers every origin alike (`*`), so the wallet header is the only one the answer varies by.
        reply.header('vary', 'X-Wallet-Signature');
        // Wallet-aware answers are the caller's own; the anonymous one may be cached briefly.
        if (walletSignature === undefined && request.query.address === undefined) {
          const { doc } = await publicVersionStatus(ctx, request.params.owner, request.params.slug);
          return sendPrebuilt(request, reply, doc, 'public, max-age=30');
        }
        reply.header('cache-control', 'private, no-store');
        // With ?address= alone: the anonymous answer (it reveals nothing), and a challenge to sign.
        const status = await versionStatus(ctx, {
          owner: request.params.owner,
          slug: request.params.slug,
          walletSignature,
        }).catch(challenged(request));
        return withNextChallenge(request, status);
      },
    );

    app.get(
      '/entitlements',
      {
        config: limited,
        schema: {
          tags: ['public'],
          summary: 'Everything the signing wallet owns, newest first, paged with next_cursor',
          headers: WalletHeaders,
          querystring: EntitlementsQuery,
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
        }).catch(challenged(request));
        reply.header('cache-control', 'private, no-store');
        return withNextChallenge(request, page);
      },
    );

    app.get(
      '/download/:token',
      {
        config: limited,
        schema: {
          tags: ['public'],
          summary: 'The zip of a grant (the download_url of a 200 from the buy routes); valid 5 minutes',
          description:
            'A release the operator yanked answers `410 release_yanked`. An expired URL answers `402 expired_authorization` (no payment is asked: the message names the re-fetch, GET /api/r/{owner}/{slug}/v/{version} with X-Wallet-Signature, that gives a fresh one).',
          params: DownloadParams,
          response: {
            200: z.any().meta({ description: 'application/zip, streamed' }),
            ...errorResponses('expired_authorization', 'not_found', 'release_yanked', 'rate_limited'),
          },
        },
      },
      async (request, reply) => {
        const download = await openDownload(ctx, request.params.token);
        reply
          .header('content-type', 'application/zip')
          .header('content-length', String(download.sizeBytes))
          .header('content-disposition', `attachment; filename="${download.fileName}"`)
          .header('x-artifact-sha256', download.artifactSha256)
          .header('cache-control', 'private, no-store');
        return reply.send(download.stream);
      },
    );
  };
}
