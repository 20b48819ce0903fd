import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type { Config, RateLimitClass } from '../config.js';
import { AppError } from './errors.js';
import { peerKey } from './peer-key.js';
import { sharedStoreWithLocalFallback } from './rate-limit-store.js';

const NAME_SPACE = 'repo402:rl:';

/**
 * Fixed windows (a counter that starts with the first request and resets when its window ends,
 * never sliding), per client (an IPv4 address, an IPv6 /64: `peerKey`) and route, in memory or in Redis when several processes share it.
 * While Redis is unreachable each process counts alone (`sharedStoreWithLocalFallback`, logged):
 * the limits hold per process and no request fails or waits for Redis, since availability of paid
 * downloads matters more than a few extra requests.
 */
export async function installRateLimits(app: FastifyInstance, redis?: Redis): Promise<void> {
  await app.register(rateLimit, {
    global: false,
    ...(redis ? { store: sharedStoreWithLocalFallback(redis, NAME_SPACE, app.log) } : {}),
    // Only a store fault that is not Redis's (the fallback answers for Redis) reaches this.
    skipOnError: true,
    continueExceeding: false,
    keyGenerator: (request) => peerKey(request.ip),
    errorResponseBuilder: (_request, context) =>
      new AppError('rate_limited', {
        message: `Too many requests; the window resets in ${context.after}`,
        retryAfterSeconds: Math.max(1, Math.ceil(context.ttl / 1000)),
      }),
  });
}

/** The route `config` entry giving a route its class's budget. */
export function rateLimitConfig(config: Config, routeClass: RateLimitClass) {
  const rule = config.rateLimits[routeClass];
  return { rateLimit: { max: rule.max, timeWindow: rule.windowSeconds * 1000 } };
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
) {
  const limit = app.rateLimit({
    ...rateLimitConfig(config, routeClass).rateLimit,
    // The plugin leaves the route out of such a limiter's store keys, so the key names what it counts.
    keyGenerator: (request) => `${name}:${peerKey(request.ip)}`,
  });
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    await limit.call(app, request, reply);
  };
}
