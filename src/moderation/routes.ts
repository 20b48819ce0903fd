import { z } from 'zod';
import type { App, AppContext } from '../context.js';
import { creatorOf, requireApiKey } from '../identity/guard.js';
import { BODY_LIMITS } from '../platform/http/json-body.js';
import { routeOptions } from '../platform/http/route-options.js';
import { errorResponses } from '../platform/http/schemas.js';
import { countedRateLimit, rateLimitConfig } from '../platform/limits/rate-limit.js';
import { noticesOf } from './notices.js';
import { fileReport } from './reports.js';
import { ReportReceiptSchema, ReportRequestSchema } from './schemas.js';

const NoticesSchema = z
  .object({
    notices: z.array(
      z.object({
        id: z.number().int(),
        at: z.iso.datetime(),
        type: z.string().meta({
          description:
            '`release.yanked`, `release.unyanked`, `listing.suspended`, `listing.unsuspended`, `creator.suspended`, `creator.unsuspended`, `report.received`, `report.resolved`',
        }),
        listing: z
          .string()
          .nullable()
          .meta({ description: '`owner/slug`, when the notice is about one listing' }),
        text: z.string().meta({ description: 'What happened, in a sentence for the creator' }),
      }),
    ),
  })
  .meta({ id: 'Notices' });

/** Reports (anyone) and the notices a creator reads in their app. */
export function moderationRoutes(ctx: AppContext) {
  return async (app: App) => {
    // No account: an address may file a few an hour (REPORT_RATE_LIMIT), never a flood. Counted
    // when a report is valid, as registration's attempts are; every request, refused early or not,
    // counts against the public budget.
    const countReport = countedRateLimit(app, ctx.config, 'reports', 'reports');
    app.post(
      '/reports',
      {
        config: rateLimitConfig(ctx.config, 'public'),
        bodyLimit: BODY_LIMITS.large,
        schema: {
          tags: ['public'],
          summary:
            'Report a listing (malware, an exposed secret, a copyright claim, other): no account; the operator reviews it and the creator is told',
          body: ReportRequestSchema,
          response: {
            201: ReportReceiptSchema,
            ...errorResponses('invalid_request', 'not_found', 'rate_limited'),
          },
        },
      },
      async (request, reply) => {
        await countReport(request, reply);
        const receipt = await fileReport(ctx, request.body);
        reply.code(201).header('cache-control', 'no-store');
        return receipt;
      },
    );

    const route = routeOptions(ctx.config, { rateLimit: 'creator', tag: 'creator' });
    app.get(
      '/creators/me/notices',
      route({
        guard: requireApiKey(ctx, 'listings:read'),
        summary:
          "What the operator did to the caller's listings (yanks, suspensions) and reports about them, newest first, in words",
        response: {
          200: NoticesSchema,
          ...errorResponses('invalid_key', 'insufficient_scope', 'rate_limited'),
        },
      }),
      async (request, reply) => {
        reply.header('cache-control', 'no-store');
        return { notices: await noticesOf(ctx, creatorOf(request).id) };
      },
    );
  };
}
