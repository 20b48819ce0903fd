import { createRequire } from 'node:module';
import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor, RateLimitOptions } from '@fastify/rate-limit';
import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';

/**
 * A rate-limit store for @fastify/rate-limit that counts in Redis, shared by every process, and in
 * this process's memory while Redis cannot answer: the limits keep applying (per process, so a
 * client spread over N processes gets up to N times its budget) instead of vanishing, and no
 * request waits on or fails for a dead Redis. Each change between the two is logged once.
 */

type Store = FastifyRateLimitStore;
type Callback = Parameters<Store['incr']>[1];
type RouteOptions = Parameters<Store['child']>[0];

// The plugin's own two stores (CommonJS, not in its typed exports), composed rather than rewritten.
const require = createRequire(import.meta.url);
const RedisStore = require('@fastify/rate-limit/store/RedisStore') as new (
  continueExceeding: boolean,
  exponentialBackoff: boolean,
  redis: Redis,
  key: string,
) => Store;
const LocalStore = require('@fastify/rate-limit/store/LocalStore') as new (
  continueExceeding: boolean,
  exponentialBackoff: boolean,
) => Store;

export function sharedStoreWithLocalFallback(
  redis: Redis,
  nameSpace: string,
  log: FastifyBaseLogger,
): FastifyRateLimitStoreCtor {
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

  return class SharedStoreWithLocalFallback implements Store {
    private readonly redisStore: Store;
    private readonly localStore: Store;

    constructor(params: RateLimitOptions, stores?: { redis: Store; local: Store }) {
      const continueExceeding = params.continueExceeding ?? false;
      const exponentialBackoff = params.exponentialBackoff ?? false;
      this.redisStore =
        stores?.redis ?? new RedisStore(continueExceeding, exponentialBackoff, redis, nameSpace);
      this.localStore = stores?.local ?? new LocalStore(continueExceeding, exponentialBackoff);
    }

    incr(key: string, callback: Callback, timeWindow: number, max: number): void {
      // A client that is not connected would only fail the call; skip the round trip.
      if (redis.status !== 'ready') {
        fellBack();
        this.localStore.incr(key, callback, timeWindow, max);
        return;
      }
      this.redisStore.incr(
        key,
        (error, result) => {
          if (error) {
            fellBack(error);
            this.localStore.incr(key, callback, timeWindow, max);
            return;
          }
          recovered();
          callback(null, result!);
        },
        timeWindow,
        max,
      );
    }

    child(routeOptions: RouteOptions): Store {
      return new SharedStoreWithLocalFallback(routeOptions as RateLimitOptions, {
        redis: this.redisStore.child(routeOptions),
        local: this.localStore.child(routeOptions),
      });
    }
  };
}
