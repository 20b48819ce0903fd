import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';

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

export const EXPOSED_HEADERS = [
  'PAYMENT-REQUIRED',
  'PAYMENT-RESPONSE',
  'x-request-id',
  'retry-after',
  'etag',
  'Mcp-Session-Id',
  'MCP-Protocol-Version',
];

export const ALLOWED_HEADERS = [
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

export function isPublicPath(url: string): boolean {
  const path = url.split('?')[0]!;
  return PUBLIC_PREFIXES.some((prefix) => path === prefix.replace(/\/$/, '') || path.startsWith(prefix));
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
 * Which routes answer cross-origin is decided once, as each route is registered, not per request
 * (a per-request delegator was a tenth of the CPU of a cached public read; docs/BENCHMARKS.md): the
 * plugin's options are the public ones, and every route outside the public prefixes, including the
 * plugin's catch-all `OPTIONS *`, carries `cors: false`. A preflight for a public path is answered
 * by the plugin's hook on the matching `OPTIONS` route registered here; any other preflight meets
 * the catch-all, which refuses it.
 */
export async function installCors(app: FastifyInstance): Promise<void> {
  app.addHook('onRoute', (route) => {
    if (!isPublicPath(route.url)) route.config = { ...route.config, cors: false };
  });
  await app.register(cors, { ...PUBLIC_CORS, hideOptionsRoute: true });
  for (const prefix of PUBLIC_PREFIXES) {
    app.options(prefix.endsWith('/') ? `${prefix}*` : prefix, { schema: { hide: true } }, (_request, reply) =>
      reply.callNotFound(),
    );
  }
}
