import { createRequire } from 'node:module';
import type { FastifyRateLimitStore } from '@fastify/rate-limit';
import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';

/**
 * Where the rate limits count: @fastify/rate-limit's own stores, composed rather than rewritten.
 * Without Redis, each route counts in this process's memory (an LRU of clients). With Redis, the
 * counts are shared by every process, and kept in this process's memory while Redis cannot answer:
 * the limits keep applying (per process, so a client spread over N processes gets up to N times its
 * budget) instead of vanishing, and no request fails for a dead Redis. A Redis that keeps its
 * connections but stops answering (blocked, or a half-open connection after a partition) fails
 * each call after the client's command timeout (`REDIS_COMMAND_TIMEOUT_MS`); after a failure one
 * request a second asks it again while the others count here at once, so a stalled Redis costs
 * the requests that meet it at most that timeout. A connection whose calls have timed out for two
 * seconds, with no answer between, is dropped for a new one, which is not asked before it is
 * ready: a connection left half-open by a partition would otherwise keep costing one request a
 * second the timeout until the kernel gives up on it (a quarter of an hour with Linux's defaults).
 * Going local is logged once; going back is logged once Redis has answered for two seconds with
 * no failure between, so a Redis whose latency hovers at the timeout, failing one call in a few,
 * writes one line rather than two a second.
 */

type Callback = Parameters<FastifyRateLimitStore['incr']>[1];

/** How long a Redis call may take before the limits count in this process instead (`runtime.ts`). */
export const REDIS_COMMAND_TIMEOUT_MS = 250;
/** After Redis failed a call, the time before one request asks it again. */
const ASK_AGAIN_AFTER_MS = 1000;
/**
 * How long a connection's calls may keep timing out, with no answer between, before it is dropped
 * and made again. A span rather than a count: many requests meeting one slow moment time out
 * together, and that alone is no reason to reconnect.
 */
const RECONNECT_AFTER_TIMEOUTS_FOR_MS = 2000;
/** How long Redis must answer with no failure between before the log says the limits are shared again. */
export const LOG_RECOVERY_AFTER_MS = 2000;

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
  /** Whether the log last said the limits count locally; and since when Redis has answered without failing. */
  let loggedLocal = false;
  let answeringSince: number | undefined;
  /** While counting here after a failed call: when one request may ask Redis again. */
  let askAgainAt = 0;
  /** When this connection's calls began timing out, with no answer since. */
  let timingOutSince: number | undefined;
  /** Dropped for a new connection: ioredis reports the old one ready until its socket closes. */
  let reconnecting = false;
  // A new connection is worth asking at once, whatever failed on the old one.
  redis.on('ready', () => {
    askAgainAt = 0;
    timingOutSince = undefined;
    reconnecting = false;
  });
  const timedOut = (now: number) => {
    timingOutSince ??= now;
    if (reconnecting || now - timingOutSince < RECONNECT_AFTER_TIMEOUTS_FOR_MS) return;
    reconnecting = true;
    log.warn('Redis calls have timed out for 2 s: dropping the connection for a new one');
    redis.disconnect(true);
  };
  const fellBack = (error?: Error) => {
    if (error) {
      const now = Date.now();
      askAgainAt = now + ASK_AGAIN_AFTER_MS;
      if (isTimeout(error)) timedOut(now);
    }
    answeringSince = undefined;
    if (!shared) return;
    shared = false;
    if (loggedLocal) return;
    loggedLocal = true;
    log.warn(
      { err: error, redisStatus: redis.status },
      'Redis unreachable: rate limits are counted in each process alone until it answers again',
    );
  };
  const recovered = () => {
    timingOutSince = undefined;
    shared = true;
    if (!loggedLocal) return;
    const now = Date.now();
    answeringSince ??= now;
    if (now - answeringSince < LOG_RECOVERY_AFTER_MS) return;
    loggedLocal = false;
    log.info('Redis answers again: rate limits are shared by every process again');
  };
  const asksRedis = () => {
    // A client that is not connected would only fail the call; skip the round trip.
    if (redis.status !== 'ready' || reconnecting) return false;
    if (shared) return true;
    const now = Date.now();
    if (now < askAgainAt) return false;
    // This request asks; the others keep counting here until it has an answer.
    askAgainAt = now + ASK_AGAIN_AFTER_MS;
    return true;
  };
  return byPrefix((prefix) => {
    const redisStore = new RedisStore(false, false, redis, `${nameSpace}${prefix}`);
    const localStore = new LocalStore(false, false);
    return (key, callback, windowMs, max) => {
      if (!asksRedis()) {
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
    };
  });
}

/** ioredis fails a call that outlived `commandTimeout` with this message. */
function isTimeout(error: Error): boolean {
  return error.message === 'Command timed out';
}

/** Counts in this process's memory: each store (one per limit) an LRU of its clients. */
function inMemory(): RateLimitStore {
  return byPrefix(() => {
    const store = new LocalStore(false, false);
    return (key, callback, windowMs, max) => store.incr(key, callback, windowMs, max);
  });
}

/**
 * The store of each prefix, made once: two limits naming the same prefix (a GET route and its
 * HEAD) count together.
 */
function byPrefix(counter: (prefix: string) => RateLimitStore['incr']): RateLimitStore {
  const stores = new Map<string, RateLimitStore>();
  const storeOf = (prefix: string): RateLimitStore => {
    let store = stores.get(prefix);
    if (!store) {
      store = { incr: counter(prefix), child: (childPrefix) => storeOf(`${prefix}${childPrefix}`) };
      stores.set(prefix, store);
    }
    return store;
  };
  return storeOf('');
}
