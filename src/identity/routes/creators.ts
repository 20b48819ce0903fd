import type { z } from 'zod';
import type { App, AppContext } from '../../context.js';
import { BODY_LIMITS } from '../../platform/http/json-body.js';
import { routeOptions } from '../../platform/http/route-options.js';
import { errorResponses } from '../../platform/http/schemas.js';
import { requestCountry } from '../../platform/limits/compliance.js';
import { countedRateLimit, rateLimitConfig } from '../../platform/limits/rate-limit.js';
import { requestCreatorChanges } from '../account-changes.js';
import { creatorView } from '../creators.js';
import { creatorOf, requireApiKey } from '../guard.js';
import { IDEMPOTENCY_HEADER } from '../idempotency.js';
import { registerCreator } from '../registration.js';
import {
  CreateCreatorRequestSchema,
  CreateCreatorResponseSchema,
  CreatorSchema,
  RegistrationHeadersSchema,
  UpdateCreatorRequestSchema,
  UpdateCreatorResponseSchema,
} from '../schemas.js';
import { creatorBody } from '../views.js';

export function registerCreatorRoutes(app: App, ctx: AppContext): void {
  const route = routeOptions(ctx.config, { rateLimit: 'creator', tag: 'creator' });
  // Counted by the service when an attempt reaches the signature check, not as requests arrive.
  const countRegistration = countedRateLimit(app, ctx.config, 'registration', 'registration');

  app.post(
    '/creators',
    {
      // Every request, refused early or not, counts against the auth budget; attempts that reach
      // the signature check also use up registration's 5 per hour.
      config: rateLimitConfig(ctx.config, 'auth'),
      bodyLimit: BODY_LIMITS.signed,
      schema: {
        tags: ['creator'],
        summary: 'Register headless: returns the creator and its API key, shown once',
        headers: RegistrationHeadersSchema,
        body: CreateCreatorRequestSchema,
        response: {
          201: CreateCreatorResponseSchema,
          ...errorResponses(
            'invalid_request',
            'payout_address_unverified',
            'invite_required',
            'sanctioned_counterparty',
            'terms_version_stale',
            'rate_limited',
            'blocked_jurisdiction',
          ),
        },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const result = await registerCreator(
        ctx,
        {
          handle: body.handle,
          payoutAddress: body.payout_address,
          acceptedTermsVersion: body.accepted_terms_version,
          addressProof: body.address_proof,
          inviteCode: body.invite_code,
          abuseContact: body.abuse_contact,
        },
        {
          country: requestCountry(ctx.config.compliance, request.headers),
          idempotencyKey: request.headers[IDEMPOTENCY_HEADER],
          body,
          countAttempt: () => countRegistration(request, reply),
        },
      );
      // Only a 201 is ever recorded, so a replay is one too.
      reply.code(201).header('cache-control', 'no-store');
      if (result.replayed) reply.header('idempotent-replayed', 'true');
      return result.body as z.infer<typeof CreateCreatorResponseSchema>;
    },
  );

  app.get(
    '/creators/me',
    route({
      guard: requireApiKey(ctx),
      summary: 'The calling creator: values in force and pending changes',
      response: { 200: CreatorSchema, ...errorResponses('invalid_key', 'rate_limited') },
    }),
    async (request, reply) => {
      const view = await creatorView(ctx.database.db, creatorOf(request).id, ctx.clock.now());
      reply.header('cache-control', 'no-store');
      return creatorBody(view!);
    },
  );

  app.patch(
    '/creators/me',
    route({
      guard: requireApiKey(ctx, 'account:write'),
      summary:
        'Request a payout address or abuse contact change, signed by the payout address in force; it takes effect 48 hours later',
      body: UpdateCreatorRequestSchema,
      bodyLimit: BODY_LIMITS.large,
      response: {
        200: UpdateCreatorResponseSchema,
        ...errorResponses(
          'invalid_request',
          'payout_address_unverified',
          'invalid_key',
          'invalid_signature',
          'step_up_required',
          'insufficient_scope',
          'sanctioned_counterparty',
          'rate_limited',
          'blocked_jurisdiction',
        ),
      },
    }),
    async (request, reply) => {
      const body = request.body;
      const view = await requestCreatorChanges(
        ctx,
        creatorOf(request),
        {
          payoutAddress: body.payout_address,
          abuseContact: body.abuse_contact,
          stepUp: body.step_up,
          addressProof: body.address_proof,
          country: requestCountry(ctx.config.compliance, request.headers),
        },
        request.log,
      );
      reply.header('cache-control', 'no-store');
      return creatorBody(view);
    },
  );
}
