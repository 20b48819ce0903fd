import type { FastifySchema, onRequestAsyncHookHandler } from 'fastify';
import type { Config, RateLimitClass } from '../../config.js';
import { rateLimitConfig } from '../limits/rate-limit.js';

/**
 * One route's OpenAPI summary and schemas, its guard (the `onRequest` hook), if any, and the
 * largest body it reads (`BODY_LIMITS`; the app's small default when absent).
 */
type RouteSpec = FastifySchema & { summary: string; guard?: onRequestAsyncHookHandler; bodyLimit?: number };

/**
 * What every route of one plugin shares, declared once: its rate-limit class and OpenAPI tag. The
 * function it returns turns one route's spec into Fastify route options.
 */
export function routeOptions(config: Config, shared: { rateLimit: RateLimitClass; tag: string }) {
  const limit = rateLimitConfig(config, shared.rateLimit);
  return <S extends RouteSpec>({ guard, bodyLimit, ...schema }: S) => ({
    config: limit,
    onRequest: guard,
    bodyLimit,
    schema: { tags: [shared.tag], ...schema },
  });
}
