import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { Redis } from 'ioredis';
import type { Config, RateLimitClass } from '../../config.js';
import { AppError } from '../errors.js';
import { appendHook } from '../http/route-hooks.js';
import { peerKey } from './peer-key.js';
import { type RateLimitStore, rateLimitStore } from './rate-limit-counters.js';

/** A route's budget: `max` requests per client in each fixed window of `windowMs`. */
export interface RateLimitRule {
  max: number;
  windowMs: number;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set with `rateLimitConfig`; read as the route is registered (`installRateLimits`). */
    limit?: RateLimitRule;
  }
  interface FastifyInstance {
    /** Where every limit of this app counts (`installRateLimits`). */
    rateLimitStore: RateLimitStore;
    /** Told of each request a limit refuses, by route (the refusal metric). */
    rateLimitRefused: (route: string) => void;
  }
}

const NAME_SPACE = 'repo402:rl:';

/**
 * Fixed windows (a counter that starts with the first request and resets when its window ends,
 * never sliding), per client (an IPv4 address, an IPv6 /64: `peerKey`) and route, in memory or in
 * Redis when several processes share it. While Redis is unreachable or stalled each process counts
 * alone (`rateLimitStore`, logged): the limits hold per process and no request fails for Redis, nor
 * waits on it longer than its command timeout, since availability of paid downloads matters more
 * than a few extra requests.
 *
 * The counting is @fastify/rate-limit's own stores (its Lua script in Redis); the hook that asks
 * them is ours, a callback that answers at once when the store does. The plugin's hook cost a
 * cached public read about 5 µs of its 40-50 (docs/DECISIONS.md, D-94): promises and
 * awaits around a synchronous count, and Fastify's `routeOptions` built on every request.
 */
export function installRateLimits(
  app: FastifyInstance,
  redis: Redis | undefined,
  refused: (route: string) => void,
): void {
  const store = rateLimitStore(NAME_SPACE, app.log, redis);
  app.decorate('rateLimitStore', store);
  app.decorate('rateLimitRefused', refused);
  app.addHook('onRoute', (route) => {
    const rule = route.config?.limit;
    if (!rule) return;
    // A GET route's HEAD (Fastify adds it) reads the same resource: one budget for both.
    const methods = [...new Set([route.method].flat().map((method) => (method === 'HEAD' ? 'GET' : method)))];
    appendHook(
      route,
      'onRequest',
      limitRequests(store.child(`${methods.join(',')}${route.url}-`), rule, clientOf, () =>
        refused(route.url),
      ),
    );
  });
}

/** The route `config` entry giving a route its class's budget. */
export function rateLimitConfig(config: Config, routeClass: RateLimitClass): { limit: RateLimitRule } {
  const rule = config.rateLimits[routeClass];
  return { limit: { max: rule.max, windowMs: rule.windowSeconds * 1000 } };
}

/**
 * A class's budget used up where a handler calls it rather than as the request arrives, for a
 * route where only some requests count (registration: those that reach the signature check). Same
 * store (Redis when configured), window, headers and `429` as the route-level limits.
 */
export function countedRateLimit(
  app: FastifyInstance,
  config: Config,
  routeClass: RateLimitClass,
  name: string,
): (request: FastifyRequest, reply: FastifyReply) => Promise<void> {
  const limit = limitRequests(
    app.rateLimitStore.child(`counted-${name}-`),
    rateLimitConfig(config, routeClass).limit,
    clientOf,
    () => app.rateLimitRefused(name),
  );
  return (request, reply) =>
    new Promise((resolve, reject) => {
      limit.call(app, request, reply, (error?: Error) => (error ? reject(error) : resolve()));
    });
}

function clientOf(request: FastifyRequest): string {
  return peerKey(request.ip);
}

function limitRequests(
  store: RateLimitStore,
  { max, windowMs }: RateLimitRule,
  keyOf: (request: FastifyRequest) => string,
  refused: () => void,
): onRequestHookHandler {
  return (request, reply, done) => {
    store.incr(
      keyOf(request),
      (error, count) => {
        // Only a fault of the in-memory count gets here (Redis's fall back to it): let the request
        // through, as a limit that cannot count must not take the API down with it.
        if (error || !count) {
          request.log.error({ err: error }, 'rate limit not counted; the request is let through');
          done();
          return;
        }
        const resetSeconds = Math.max(1, Math.ceil(count.ttl / 1000));
        const remaining = Math.max(0, max - count.current);
        // A request counted by two budgets (registration: its route's class, then its own) shows
        // the one nearer its end: fewer requests left, or as few and a later reset. A refusal waits
        // for every used-up budget, so its retry-after is the later reset of the two.
        const shown = reply.getHeader('x-ratelimit-remaining');
        const shownRemaining = shown === undefined ? Number.POSITIVE_INFINITY : Number(shown);
        const shownReset = shown === undefined ? 0 : Number(reply.getHeader('x-ratelimit-reset'));
        if (remaining < shownRemaining || (remaining === shownRemaining && resetSeconds >= shownReset)) {
          reply.header('x-ratelimit-limit', max);
          reply.header('x-ratelimit-remaining', remaining);
          reply.header('x-ratelimit-reset', resetSeconds);
        }
        if (count.current <= max) {
          done();
          return;
        }
        refused();
        const retryAfterSeconds = shownRemaining === 0 ? Math.max(resetSeconds, shownReset) : resetSeconds;
        done(
          new AppError('rate_limited', {
            message: `Too many requests; the window resets in ${retryAfterSeconds} seconds`,
            retryAfterSeconds,
          }),
        );
      },
      windowMs,
      max,
    );
  };
}
