import cors from '@fastify/cors';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { appendHook } from './route-hooks.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Read by @fastify/cors (its route-level switch; its own types do not declare it). */
    cors?: false;
  }
}

/**
 * Buyer routes are called from any origin (browser wallets, agent front ends), so they answer
 * every origin without credentials and expose the x402 headers. Creator routes get no CORS at all:
 * the web app is same-origin, and a bearer key should not be usable from a foreign page.
 */
const PUBLIC_PREFIXES = [
  // A buyer's wallet proof (X-Wallet-Signature) starts with a challenge; rotate-key beside it is a creator's.
  '/api/auth/challenge',
  '/api/r/',
  '/api/v/',
  '/api/label/',
  '/api/entitlements',
  '/api/snippet/',
  '/api/download/',
  '/api/mcp',
  '/api/terms',
  '/api/health',
  '/api/openapi.json',
  '/.well-known/',
];

const EXPOSED_HEADERS = [
  'PAYMENT-REQUIRED',
  'PAYMENT-RESPONSE',
  'x-request-id',
  'retry-after',
  'etag',
  'Mcp-Session-Id',
  'MCP-Protocol-Version',
];

const ALLOWED_HEADERS = [
  'PAYMENT-SIGNATURE',
  'X-Quote-Id',
  'X-Wallet-Signature',
  'Content-Type',
  'Accept',
  'If-None-Match',
  'x-request-id',
  'MCP-Protocol-Version',
  'Mcp-Session-Id',
  'Last-Event-ID',
  // @x402/fetch sends this response header as a request header too; refusing it breaks preflight.
  'Access-Control-Expose-Headers',
];

/** A prefix ending in `/` covers what is below it; one without covers itself and its sub-paths. */
function isPublicPath(url: string): boolean {
  const path = url.split('?')[0]!;
  return PUBLIC_PREFIXES.some((prefix) =>
    prefix.endsWith('/')
      ? path === prefix.slice(0, -1) || path.startsWith(prefix)
      : path === prefix || path.startsWith(`${prefix}/`),
  );
}

const PUBLIC_CORS = {
  origin: '*',
  methods: ['GET', 'HEAD', 'POST', 'DELETE', 'OPTIONS'],
  allowedHeaders: ALLOWED_HEADERS,
  exposedHeaders: EXPOSED_HEADERS,
  credentials: false,
  maxAge: 600,
  // A plain OPTIONS (no Origin, no requested method) is answered like a preflight, not with the
  // plugin's text/plain 400 outside the spec's error bodies.
  strictPreflight: false,
};

/**
 * Which routes answer cross-origin is decided once, as each route is registered, never per
 * request. A public route's answer carries two constant headers, set by a hook of its own (what the
 * plugin would set for `origin: '*'` without credentials; the plugin's per-request work was about a
 * tenth of a cached public read's CPU, docs/DECISIONS.md, D-84). Preflights are the plugin's: it is
 * registered in a scope that holds only the `OPTIONS` routes, one per public prefix, answered by
 * its hook, and its catch-all `OPTIONS *`, which carries `cors: false` and so refuses every other
 * preflight. An error on a public path is answered with the same headers, route or none.
 */
export async function installCors(app: FastifyInstance): Promise<void> {
  app.addHook('onRoute', (route) => {
    if ([route.method].flat().includes('OPTIONS') || !isPublicPath(route.url)) return;
    appendHook(route, 'onRequest', addPublicCorsHeaders);
  });
  await app.register(async (preflights) => {
    preflights.addHook('onRoute', (route) => {
      if (!isPublicPath(route.url)) route.config = { ...route.config, cors: false };
    });
    await preflights.register(cors, { ...PUBLIC_CORS, hideOptionsRoute: true });
    for (const prefix of PUBLIC_PREFIXES) {
      preflights.options(
        prefix.endsWith('/') ? `${prefix}*` : prefix,
        { schema: { hide: true } },
        (_request, reply) => reply.callNotFound(),
      );
    }
  });
}

const EXPOSED = EXPOSED_HEADERS.join(', ');

function setPublicCorsHeaders(reply: FastifyReply): void {
  reply.header('access-control-allow-origin', '*');
  reply.header('access-control-expose-headers', EXPOSED);
}

function addPublicCorsHeaders(_request: FastifyRequest, reply: FastifyReply, done: () => void): void {
  setPublicCorsHeaders(reply);
  done();
}

/**
 * For the error handler: an error on a public path carries the headers however early it happened,
 * with no route to add them (no route matched, and the body of the request could not be parsed).
 */
export function addCorsHeadersOnPublicPath(request: FastifyRequest, reply: FastifyReply): void {
  if (isPublicPath(request.url)) setPublicCorsHeaders(reply);
}
