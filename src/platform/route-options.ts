import type { FastifySchema, onRequestAsyncHookHandler } from 'fastify';
import type { Config, RateLimitClass } from '../config.js';
import { rateLimitConfig } from './rate-limit.js';

/** One route's OpenAPI summary and schemas, and its guard (the `onRequest` hook), if any. */
type RouteSpec = FastifySchema & { summary: string; guard?: onRequestAsyncHookHandler };

/**
 * What every route of one plugin shares, declared once: its rate-limit class and OpenAPI tag. The
 * function it returns turns one route's spec into Fastify route options.
 */
export function routeOptions(config: Config, shared: { rateLimit: RateLimitClass; tag: string }) {
  const limit = rateLimitConfig(config, shared.rateLimit);
  return <S extends RouteSpec>({ guard, ...schema }: S) => ({
    config: limit,
    onRequest: guard,
    schema: { tags: [shared.tag], ...schema },
  });
}
