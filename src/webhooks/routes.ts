import { getAddress } from 'viem';
import { z } from 'zod';
import type { App, AppContext } from '../context.js';
import { creatorOf, requireApiKey } from '../identity/guard.js';
import { verifyWalletSignatureHeader, withWalletChallenge } from '../identity/wallet-signature.js';
import type { ErrorCode } from '../platform/errors.js';
import { routeOptions } from '../platform/http/route-options.js';
import { errorResponses } from '../platform/http/schemas.js';
import {
  CreatedSubscriptionSchema,
  CreatorSubscribeSchema,
  DeletedSchema,
  DeliveryLogSchema,
  HolderSubscribeSchema,
  SubscriptionIdParams,
  SubscriptionListSchema,
} from './schemas.js';
import {
  deliveriesOf,
  listSubscriptions,
  type Subscriber,
  type SubscriptionView,
  subscribe,
  unsubscribe,
} from './subscriptions.js';

const WalletHeaders = z.looseObject({ 'x-wallet-signature': z.string().optional() });

/**
 * Webhook subscriptions (docs/WEBHOOKS.md), under `/api`: a holder's at `/webhooks` (its wallet
 * signs each request, `X-Wallet-Signature`), a creator's at `/creators/me/webhooks` (an API key
 * with `account:write`: the deliveries carry sales).
 */
export function webhookRoutes(ctx: AppContext) {
  return async (app: App): Promise<void> => {
    // A subscription list, its log and above all a new secret are the subscriber's alone.
    app.addHook('onRequest', async (_request, reply) => {
      reply.header('cache-control', 'no-store');
    });
    const holderRoute = routeOptions(ctx.config, { rateLimit: 'public', tag: 'public' });
    const creatorRoute = routeOptions(ctx.config, { rateLimit: 'creator', tag: 'creator' });
    const guard = requireApiKey(ctx, 'account:write');
    const walletErrors = (...codes: ErrorCode[]) =>
      errorResponses('invalid_request', 'invalid_signature', ...codes, 'rate_limited');
    const keyErrors = (...codes: ErrorCode[]) =>
      errorResponses('invalid_request', 'invalid_key', 'insufficient_scope', ...codes, 'rate_limited');
    // The wallet is proved before validation (preValidation: once the body is read within its
    // limit): a caller without a good signature learns nothing of the body's rules or of whether an
    // id exists. A refusal carries a fresh challenge for the wallet the header names, as on the
    // buyer routes.
    const wallets = new WeakMap<object, Subscriber>();
    const proveWallet = async (request: { headers: Record<string, string | string[] | undefined> }) => {
      const header = request.headers['x-wallet-signature'];
      const address = await verifyWalletSignatureHeader(ctx, header).catch(async (error: unknown) => {
        throw await withWalletChallenge(ctx, error, { header });
      });
      wallets.set(request, { wallet: getAddress(address).toLowerCase() });
    };
    const holder = (request: object): Subscriber => wallets.get(request)!;
    const walletSecurity = { headers: WalletHeaders, security: [{ walletSignature: [] }] };
    const walletRoute = <S extends Parameters<typeof holderRoute>[0]>(spec: S) => ({
      ...holderRoute(spec),
      preValidation: proveWallet,
    });

    app.post(
      '/webhooks',
      walletRoute({
        summary:
          'Subscribe the signing wallet to webhooks about the listings it holds (the secret is shown once)',
        ...walletSecurity,
        body: HolderSubscribeSchema,
        response: { 201: CreatedSubscriptionSchema, ...walletErrors('not_entitled', 'not_found') },
      }),
      async (request, reply) => {
        const subscriber = holder(request);
        const created = await subscribe(ctx, subscriber, request.body);
        return reply.code(201).send({ ...subscriptionBody(created), secret: created.secret });
      },
    );
    app.get(
      '/webhooks',
      walletRoute({
        summary: "The signing wallet's webhook subscriptions, newest first",
        ...walletSecurity,
        response: { 200: SubscriptionListSchema, ...walletErrors() },
      }),
      async (request) => {
        const subscriber = holder(request);
        return { subscriptions: (await listSubscriptions(ctx, subscriber)).map(subscriptionBody) };
      },
    );
    app.get(
      '/webhooks/:id/deliveries',
      walletRoute({
        summary: "A holder subscription's delivery log: the newest 100 deliveries and their last outcome",
        ...walletSecurity,
        params: SubscriptionIdParams,
        response: { 200: DeliveryLogSchema, ...walletErrors('not_found') },
      }),
      async (request) => {
        const subscriber = holder(request);
        return deliveryLogBody(ctx, await deliveriesOf(ctx, subscriber, request.params.id));
      },
    );

    app.delete(
      '/webhooks/:id',
      walletRoute({
        summary: "Delete one of the signing wallet's webhook subscriptions and its delivery log",
        ...walletSecurity,
        params: SubscriptionIdParams,
        response: { 200: DeletedSchema, ...walletErrors('not_found') },
      }),
      async (request) => {
        const subscriber = holder(request);
        await unsubscribe(ctx, subscriber, request.params.id);
        return { id: request.params.id, deleted: true as const };
      },
    );
    app.post(
      '/creators/me/webhooks',
      creatorRoute({
        guard,
        summary:
          "Subscribe to webhooks about the creator's listings: sales, cuts, failed scans (the secret is shown once)",
        body: CreatorSubscribeSchema,
        response: { 201: CreatedSubscriptionSchema, ...keyErrors() },
      }),
      async (request, reply) => {
        const created = await subscribe(ctx, { creatorId: creatorOf(request).id }, request.body);
        return reply.code(201).send({ ...subscriptionBody(created), secret: created.secret });
      },
    );
    app.get(
      '/creators/me/webhooks',
      creatorRoute({
        guard,
        summary: "The creator's webhook subscriptions, newest first",
        response: { 200: SubscriptionListSchema, ...keyErrors() },
      }),
      async (request) => ({
        subscriptions: (await listSubscriptions(ctx, { creatorId: creatorOf(request).id })).map(
          subscriptionBody,
        ),
      }),
    );
    app.get(
      '/creators/me/webhooks/:id/deliveries',
      creatorRoute({
        guard,
        summary: "A creator subscription's delivery log: the newest 100 deliveries and their last outcome",
        params: SubscriptionIdParams,
        response: { 200: DeliveryLogSchema, ...keyErrors('not_found') },
      }),
      async (request) =>
        deliveryLogBody(
          ctx,
          await deliveriesOf(ctx, { creatorId: creatorOf(request).id }, request.params.id),
        ),
    );
    app.delete(
      '/creators/me/webhooks/:id',
      creatorRoute({
        guard,
        summary: "Delete one of the creator's webhook subscriptions and its delivery log",
        params: SubscriptionIdParams,
        response: { 200: DeletedSchema, ...keyErrors('not_found') },
      }),
      async (request) => {
        await unsubscribe(ctx, { creatorId: creatorOf(request).id }, request.params.id);
        return { id: request.params.id, deleted: true as const };
      },
    );
  };
}

const at = (date: Date | null) => date?.toISOString() ?? null;

function subscriptionBody({ row, listing }: SubscriptionView) {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    listing: listing ? `${listing.owner}/${listing.slug}` : null,
    created_at: row.createdAt.toISOString(),
    status: row.disabledAt ? ('disabled' as const) : ('active' as const),
    disabled_at: at(row.disabledAt),
    disabled_reason: row.disabledReason,
    consecutive_failures: row.consecutiveFailures,
  };
}

async function deliveryLogBody(ctx: AppContext, log: Awaited<ReturnType<typeof deliveriesOf>>) {
  const listing = log.subscription.listingId
    ? ((await ctx.webhookAudience.listingName(log.subscription.listingId)) ?? null)
    : null;
  return {
    subscription: subscriptionBody({ row: log.subscription, listing }),
    deliveries: log.deliveries.map((delivery) => ({
      id: delivery.id,
      event_id: delivery.eventId,
      type: delivery.type,
      state: delivery.state,
      attempts: delivery.attempts,
      last_attempt_at: at(delivery.lastAttemptAt),
      last_status: delivery.lastStatus,
      last_error: delivery.lastError,
      next_attempt_at: delivery.state === 'pending' ? at(delivery.nextAttemptAt) : null,
      created_at: delivery.createdAt.toISOString(),
      delivered_at: at(delivery.deliveredAt),
    })),
  };
}
