import swagger from '@fastify/swagger';
import Fastify from 'fastify';
import {
  jsonSchemaTransform,
  jsonSchemaTransformObject,
  serializerCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import type { OpenAPIV3_1 } from 'openapi-types';
import type { App, AppContext } from './context.js';
import { devnetRoutes } from './devnet/routes.js';
import { earningsRoutes } from './earnings/routes.js';
import { authenticateKeyRoutesFirst } from './identity/guard.js';
import { identityRoutes } from './identity/routes.js';
import { githubRepositoryRoutes, listingRoutes } from './listings/routes.js';
import { registerMcpRoutes } from './mcp/endpoint.js';
import { moderationRoutes } from './moderation/routes.js';
import { AppError } from './platform/errors.js';
import { installCors } from './platform/http/cors.js';
import {
  clientErrorHandler,
  frameworkErrorHandler,
  installErrorHandling,
  refuseConnectMethod,
} from './platform/http/error-handler.js';
import { BODY_LIMITS, installJsonBodyParser } from './platform/http/json-body.js';
import { pruneUnreferencedSchemas } from './platform/http/openapi-prune.js';
import { requestIdFor } from './platform/http/request-id.js';
import { trustProxyOption } from './platform/http/trust-proxy.js';
import { validatorCompiler } from './platform/http/zod-validation.js';
import { installRateLimits, rateLimitConfig } from './platform/limits/rate-limit.js';
import {
  installHttpMetrics,
  METRICS_PATH,
  metricsExposed,
  registerMetricsRoute,
} from './platform/metrics/exposition.js';
import { errorPages } from './public/error-pages.js';
import { READY_PATH } from './public/health.js';
import { creatorDocumentRoutes, listingDocumentRoutes, siteRoutes } from './public/routes.js';
import { buyerRoutes } from './purchases/routes.js';
import { listingReleases } from './releases/listing-releases.js';
import { releaseRoutes } from './releases/routes.js';
import { webhookRoutes } from './webhooks/routes.js';

/** Health keeps SPEC's meaning while paused; readiness says the pause itself. */
const ANSWERED_WHILE_PAUSED: ReadonlySet<string> = new Set(['/api/health', READY_PATH, METRICS_PATH]);

/** The HTTP application: platform plugins, then every domain's routes. Does not listen. */
export async function buildApp(ctx: AppContext): Promise<App> {
  const { config } = ctx;
  const errorPage = errorPages(config.baseUrl);
  const app = Fastify({
    loggerInstance: ctx.log,
    genReqId: requestIdFor,
    requestIdHeader: false,
    bodyLimit: BODY_LIMITS.small,
    // A proxy list becomes a trust function that remembers its decisions (trust-proxy.ts).
    trustProxy: trustProxyOption(config.trustProxy),
    clientErrorHandler: clientErrorHandler(config.baseUrl),
    frameworkErrors: frameworkErrorHandler(config.baseUrl, errorPage),
    // Fastify's own 503 while closing has a foreign body; the onRequest hook below answers instead.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    routerOptions: { maxParamLength: 512 },
    // A client that is slow to send its request (or sends nothing) is answered by the
    // clientErrorHandler and closed. These bound receiving only: a long download or an MCP
    // notification stream is a response, and no inactivity timeout (connectionTimeout) cuts it.
    requestTimeout: config.http.requestTimeoutMs,
    keepAliveTimeout: config.http.keepAliveTimeoutMs,
    http: {
      // Node answers an HTTP/1.1 request without Host with an empty 400; the onRequest hook below
      // answers it with the error body instead.
      requireHostHeader: false,
      headersTimeout: config.http.headersTimeoutMs,
      // Node checks the request and headers timeouts on this tick (every 30 s by default).
      connectionsCheckingInterval: 1000,
    },
  }).withTypeProvider<ZodTypeProvider>();

  if (config.trustProxy === true) {
    app.log.warn(
      'TRUST_PROXY=true believes every X-Forwarded-For entry: unless the proxy in front replaces that header, each client chooses the address its rate limits count. Set TRUST_PROXY to the addresses of the proxies in front',
    );
  }
  if (config.webhooks.allowPrivateAddresses) {
    app.log.warn(
      'WEBHOOK_ALLOW_PRIVATE_ADDRESSES=true lets webhook subscriptions reach loopback and private addresses, this host and its network included: a development setting, never for a deployment',
    );
  }
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  installErrorHandling(app, config.baseUrl, errorPage);
  installJsonBodyParser(app);
  refuseConnectMethod(app.server, config.baseUrl);

  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  // Node's close() waits for open connections; a keep-alive one that finishes a request after
  // close began would otherwise hold the process open until the shutdown timeout. These two run on
  // every request, so they take a callback rather than returning a promise.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    // HEAD is safe (RFC 9110) and its answer has no body: it never pays, nor uses up a wallet
    // challenge, so a GET route's HEAD is answered as that GET without those headers would be.
    if (request.method === 'HEAD') {
      delete request.raw.headers['payment-signature'];
      delete request.raw.headers['x-wallet-signature'];
    }
    if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) {
      // RFC 9112 section 3.2: an HTTP/1.1 request without Host is a 400 (HTTP/1.0 needs none).
      done(AppError.invalid([{ field: 'host', reason: 'an HTTP/1.1 request must carry a Host header' }]));
    } else if (closing) {
      done(
        new AppError('paused', {
          message: 'The server is shutting down; retry shortly',
          headers: { connection: 'close', 'retry-after': '1' },
        }),
      );
    } else if (ctx.pause.paused && !ANSWERED_WHILE_PAUSED.has(request.url.split('?')[0]!)) {
      done(new AppError('paused', { headers: { 'retry-after': '30' } }));
    } else {
      done();
    }
  });

  await installCors(app);
  installRateLimits(app, ctx.redis, (route) => ctx.metrics.rateLimitRefusals.inc({ route }));
  if (metricsExposed(config.metrics)) installHttpMetrics(app, ctx.metrics);
  if (config.metrics.token) {
    registerMetricsRoute(app, ctx.metrics, config.metrics.token, {
      config: rateLimitConfig(config, 'public'),
    });
  }
  // After the rate limits, so that a guessed key counts against the limit before it is looked up.
  authenticateKeyRoutesFirst(app);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'repo402',
        version: '0.0.1',
        description:
          'Sells private git repositories as versioned zip artifacts, paid per listing in USDC over HTTP 402 (x402 v2).',
      },
      servers: [{ url: config.baseUrl }],
      tags: [
        { name: 'public', description: 'Free and unauthenticated, or paid' },
        { name: 'auth', description: 'Challenges and key rotation' },
        { name: 'creator', description: 'Bearer API key' },
        { name: 'internal', description: 'Webhooks and cron, not for callers' },
      ],
      components: {
        securitySchemes: {
          apiKey: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <API_KEY>' },
          walletSignature: {
            type: 'apiKey',
            in: 'header',
            name: 'X-Wallet-Signature',
            description: 'base64 of {"address","nonce","signature"} over a wallet_ownership challenge',
          },
          paymentSignature: {
            type: 'apiKey',
            in: 'header',
            name: 'PAYMENT-SIGNATURE',
            description: 'base64 x402 v2 payment payload',
          },
        },
      },
    },
    transform: jsonSchemaTransform,
    transformObject: (doc) =>
      pruneUnreferencedSchemas(jsonSchemaTransformObject(doc) as OpenAPIV3_1.Document),
  });

  await app.register(siteRoutes, { ctx });
  await app.register(identityRoutes, { prefix: '/api', ctx });
  await app.register(listingRoutes(ctx, listingReleases(ctx)), { prefix: '/api/listings' });
  await app.register(githubRepositoryRoutes(ctx), { prefix: '/api/github' });
  await app.register(releaseRoutes(ctx), { prefix: '/api' });
  await app.register(creatorDocumentRoutes, { ctx });
  await app.register(buyerRoutes(ctx), { prefix: '/api' });
  await app.register(earningsRoutes(ctx), { prefix: '/api' });
  await app.register(moderationRoutes(ctx), { prefix: '/api' });
  await app.register(webhookRoutes(ctx), { prefix: '/api' });
  if (ctx.config.payments.mode === 'devnet') await app.register(devnetRoutes(ctx), { prefix: '/api' });
  registerMcpRoutes(app, ctx);
  await app.register(listingDocumentRoutes, { ctx });

  return app;
}
