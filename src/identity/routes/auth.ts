import { z } from 'zod';
import type { App, AppContext } from '../../context.js';
import { BODY_LIMITS } from '../../platform/http/json-body.js';
import { routeOptions } from '../../platform/http/route-options.js';
import { errorResponses } from '../../platform/http/schemas.js';
import { issueChallenge } from '../challenges.js';
import { creatorOf, requireApiKey } from '../guard.js';
import {
  ChallengeQuerySchema,
  ChallengeSchema,
  RotateKeyRequestSchema,
  RotateKeyResponseSchema,
  SessionRequestSchema,
  SessionResponseSchema,
  WalletSessionRequestSchema,
  WalletSessionResponseSchema,
} from '../schemas.js';
import { endSession, rotateKeys, startSession } from '../wallet-auth.js';
import { startWalletSession } from '../wallet-signature.js';

export function registerAuthRoutes(app: App, ctx: AppContext): void {
  const route = routeOptions(ctx.config, { rateLimit: 'auth', tag: 'auth' });

  app.get(
    '/auth/challenge',
    route({
      summary: 'A single-use EIP-4361 message to sign, bound to one purpose; expires after 5 minutes',
      querystring: ChallengeQuerySchema,
      response: { 200: ChallengeSchema, ...errorResponses('invalid_request', 'rate_limited') },
    }),
    async (request, reply) => {
      const { address, purpose, new_payout_address } = request.query;
      const challenge = await issueChallenge(ctx, { address, purpose, newPayoutAddress: new_payout_address });
      reply.header('cache-control', 'no-store');
      return {
        nonce: challenge.nonce,
        purpose: challenge.purpose,
        address: challenge.address,
        message: challenge.message,
        issued_at: challenge.issuedAt.toISOString(),
        expires_at: challenge.expiresAt.toISOString(),
      };
    },
  );

  app.post(
    '/auth/rotate-key',
    route({
      summary:
        'A new agent key for the creator whose payout address in force signed a rotate_key challenge; every other agent key and web session of the creator is revoked at once',
      body: RotateKeyRequestSchema,
      bodyLimit: BODY_LIMITS.signed,
      response: {
        200: RotateKeyResponseSchema,
        ...errorResponses('invalid_request', 'invalid_signature', 'not_found', 'rate_limited'),
      },
    }),
    async (request, reply) => {
      const { creator, key, revoked } = await rotateKeys(ctx, request.body);
      reply.header('cache-control', 'no-store');
      return {
        api_key: key.apiKey,
        handle: creator.handle,
        scopes: key.scopes,
        created_at: key.createdAt.toISOString(),
        revoked: { agent_keys: revoked.agentKeys, web_sessions: revoked.webSessions },
      };
    },
  );

  app.post(
    '/auth/sessions',
    route({
      summary:
        'Web sign-in: a wallet_ownership signature from the payout address in force gives a 12-hour session key',
      body: SessionRequestSchema,
      bodyLimit: BODY_LIMITS.signed,
      response: {
        201: SessionResponseSchema,
        ...errorResponses('invalid_request', 'invalid_signature', 'not_found', 'suspended', 'rate_limited'),
      },
    }),
    async (request, reply) => {
      const { creator, key } = await startSession(ctx, request.body);
      reply.code(201).header('cache-control', 'no-store');
      return {
        api_key: key.apiKey,
        handle: creator.handle,
        scopes: key.scopes,
        expires_at: key.expiresAt!.toISOString(),
      };
    },
  );

  app.post(
    '/auth/wallet-sessions',
    route({
      summary:
        'A buyer reading in a browser: a wallet_ownership signature gives a 30-minute wallet session, sent as X-Wallet-Signature in place of a signed challenge',
      body: WalletSessionRequestSchema,
      bodyLimit: BODY_LIMITS.signed,
      response: {
        201: WalletSessionResponseSchema,
        ...errorResponses('invalid_request', 'invalid_signature', 'rate_limited'),
      },
    }),
    async (request, reply) => {
      const session = await startWalletSession(ctx, request.body);
      reply.code(201).header('cache-control', 'no-store');
      return {
        wallet_session: session.token,
        address: session.address,
        expires_at: session.expiresAt.toISOString(),
      };
    },
  );

  app.delete(
    '/auth/sessions/current',
    route({
      guard: requireApiKey(ctx),
      summary: 'Sign out: revokes the session key this request carries',
      response: {
        204: z.null().meta({ description: 'Signed out' }),
        ...errorResponses('invalid_request', 'invalid_key', 'rate_limited'),
      },
    }),
    async (request, reply) => {
      await endSession(ctx, creatorOf(request));
      return reply.code(204).send(null);
    },
  );
}
