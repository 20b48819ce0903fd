import { performance } from 'node:perf_hooks';
import { z } from 'zod';
import type { App, AppContext } from '../context.js';
import { AppError } from '../platform/errors.js';
import { documentErrors } from '../platform/http/schemas.js';
import { rateLimitConfig } from '../platform/limits/rate-limit.js';
import { notReadyReason, ReadinessSchema } from '../platform/readiness.js';
import { VERSION } from '../platform/version.js';

export const HealthSchema = z
  .object({
    status: z.enum(['ok', 'degraded']),
    checks: z.object({ database: z.enum(['ok', 'down']) }),
    latency_ms: z.number().meta({ description: 'Time taken by the checks' }),
    time: z.iso.datetime(),
  })
  .meta({ id: 'Health' });

export type Health = z.infer<typeof HealthSchema>;

/**
 * Only our own database is probed; the facilitator, git host and storage deliberately are not.
 * Requests that arrive while a probe is running share its answer instead of queueing their own
 * behind it, so a burst of health checks cannot starve the single PGlite connection.
 */
export function healthChecker(ctx: Pick<AppContext, 'database' | 'clock'>): () => Promise<Health> {
  let inFlight: Promise<boolean> | undefined;
  return async () => {
    const started = performance.now();
    inFlight ??= ctx.database.ping(1000).finally(() => {
      inFlight = undefined;
    });
    const databaseUp = await inFlight;
    return {
      status: databaseUp ? 'ok' : 'degraded',
      checks: { database: databaseUp ? 'ok' : 'down' },
      latency_ms: Math.round((performance.now() - started) * 100) / 100,
      time: ctx.clock.now().toISOString(),
    };
  };
}

export function registerHealthRoute(app: App, ctx: AppContext): void {
  const check = healthChecker(ctx);
  app.get(
    '/api/health',
    {
      schema: {
        tags: ['public'],
        summary: 'Service health: the database only; never cached',
        description: 'The `repo402-version` response header names the version of repo402 that answered.',
        response: { 200: HealthSchema, ...documentErrors(['internal']) },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', 'no-store').header('repo402-version', VERSION);
      return check();
    },
  );
}

/**
 * GET /api/ready: for load balancers. `200` with every check when this process can do its work;
 * otherwise `503` with the error body (`paused`, SPEC's code for a service temporarily
 * unavailable) naming what is down in its message and every check in `details` (D-128). Never
 * cached; answered while paused, so the pause shows.
 */
export function registerReadinessRoute(app: App, ctx: AppContext): void {
  app.get(
    READY_PATH,
    {
      config: rateLimitConfig(ctx.config, 'public'),
      schema: {
        tags: ['public'],
        summary:
          "Readiness: this process's dependencies (database, blobs, git host, facilitator, chain, Redis) and the pause; never cached",
        response: { 200: ReadinessSchema, ...documentErrors(['paused', 'rate_limited', 'internal']) },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', 'no-store');
      const state = await ctx.readiness();
      if (state.ready) return state;
      throw new AppError('paused', {
        message: `Not ready: ${notReadyReason(state)}`,
        details: state,
        headers: { 'retry-after': '5' },
      });
    },
  );
}

export const READY_PATH = '/api/ready';
