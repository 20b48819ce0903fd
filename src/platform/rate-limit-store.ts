import { createRequire } from 'node:module';
import type { FastifyRateLimitStore } from '@fastify/rate-limit';
import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';

/**
 * Where the rate limits count: @fastify/rate-limit's own stores, composed rather than rewritten.
 * Without Redis, each route counts in this process's memory (an LRU of clients). With Redis, the
 * counts are shared by every process, and kept in this process's memory while Redis cannot answer:
 * the limits keep applying (per process, so a client spread over N processes gets up to N times its
 * budget) instead of vanishing, and no request waits on or fails for a dead Redis. Each change
 * between the two is logged once.
 */

type Callback = Parameters<FastifyRateLimitStore['incr']>[1];

export interface RateLimitStore {
  /** Counts one request of `key` in its current window (`windowMs` long) and calls back with the count. */
  incr(key: string, callback: Callback, windowMs: number, max: number): void;
  /** The store of one limit (a route, a counted limit): its counts are kept apart under `prefix`. */
  child(prefix: string): RateLimitStore;
}

// The plugin's two stores (CommonJS, not in its typed exports). Windows are fixed: neither
// continues a window while it is exceeded nor backs off.
const require = createRequire(import.meta.url);
const RedisStore = require('@fastify/rate-limit/store/RedisStore') as new (
  continueExceeding: false,
  exponentialBackoff: false,
  redis: Redis,
  key: string,
) => FastifyRateLimitStore;
const LocalStore = require('@fastify/rate-limit/store/LocalStore') as new (
  continueExceeding: false,
  exponentialBackoff: false,
) => FastifyRateLimitStore;

export function rateLimitStore(nameSpace: string, log: FastifyBaseLogger, redis?: Redis): RateLimitStore {
  if (!redis) return inMemory();
  let shared = true;
  const fellBack = (error?: Error) => {
    if (!shared) return;
    shared = false;
    log.warn(
      { err: error, redisStatus: redis.status },
      'Redis unreachable: rate limits are counted in each process alone until it answers again',
    );
  };
  const recovered = () => {
    if (shared) return;
    shared = true;
    log.info('Redis answers again: rate limits are shared by every process again');
  };
  const sharedWithLocalFallback = (prefix: string): RateLimitStore => {
    const redisStore = new RedisStore(false, false, redis, `${nameSpace}${prefix}`);
    const localStore = new LocalStore(false, false);
    return {
      incr(key, callback, windowMs, max) {
        // A client that is not connected would only fail the call; skip the round trip.
        if (redis.status !== 'ready') {
          fellBack();
          localStore.incr(key, callback, windowMs, max);
          return;
        }
        redisStore.incr(
          key,
          (error, result) => {
            if (error) {
              fellBack(error);
              localStore.incr(key, callback, windowMs, max);
              return;
            }
            recovered();
            callback(null, result!);
          },
          windowMs,
          max,
        );
      },
      child: (childPrefix) => sharedWithLocalFallback(`${prefix}${childPrefix}`),
    };
  };
  return sharedWithLocalFallback('');
}

/** Counts in this process's memory: each store (one per limit) an LRU of its clients. */
function inMemory(): RateLimitStore {
  const store = new LocalStore(false, false);
  return {
    incr: (key, callback, windowMs, max) => store.incr(key, callback, windowMs, max),
    child: () => inMemory(),
  };
}
