import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';

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
};
const NO_CORS = { origin: false };

export async function installCors(app: FastifyInstance): Promise<void> {
  await app.register(cors, {
    delegator: (request, callback) => callback(null, isPublicPath(request.url ?? '') ? PUBLIC_CORS : NO_CORS),
  });
}
