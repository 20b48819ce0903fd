import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { MetricsConfig } from '../../config.js';
import { AppError } from '../errors.js';
import type { Readiness } from '../readiness.js';
import { bearerMatches } from '../tokens.js';
import type { Metrics } from './metrics.js';

export const METRICS_PATH = '/metrics';

/** Whether an operator reads this process's metrics (a token for the public route, or the second listener). */
export function metricsExposed(config: MetricsConfig): boolean {
  return config.token !== undefined || config.port !== undefined;
}

/** Counts every answered request by route template (never the raw URL: one series per route) and times it. */
export function installHttpMetrics(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.httpRequests.inc({ method: request.method, route, status: String(reply.statusCode) });
    metrics.httpDuration.observe({ method: request.method, route }, reply.elapsedTime / 1000);
    done();
  });
}

/**
 * `GET /metrics` on the public listener, for the holder of `METRICS_TOKEN`; every other request
 * is answered as the route did not exist (`404`), so the listener does not say it has one.
 * Not in the OpenAPI document: it is the operator's, not the API's.
 */
export function registerMetricsRoute(
  app: FastifyInstance,
  metrics: Metrics,
  token: string,
  routeOptions: { config?: object } = {},
): void {
  app.get(METRICS_PATH, { ...routeOptions, schema: { hide: true } }, async (request, reply) => {
    if (!bearerMatches(request.headers.authorization, token)) throw new AppError('not_found');
    const { body, contentType } = await metrics.exposition();
    reply.header('cache-control', 'no-store').type(contentType);
    return body;
  });
}

export interface MetricsListener {
  address: string;
  close(): Promise<void>;
}

/**
 * The second listener (`METRICS_PORT` on `METRICS_HOST`), on every process kind: `GET /metrics`
 * (with `METRICS_TOKEN` when one is set) and `GET /ready` (`200` ready, `503` not, the same JSON
 * as `/api/ready`). How a worker or git host, which serve no public HTTP, are watched.
 */
export async function startMetricsListener(process: {
  config: { metrics: MetricsConfig };
  metrics: Metrics;
  readiness(): Promise<Readiness>;
}): Promise<MetricsListener | undefined> {
  const {
    config: { metrics: config },
    metrics,
    readiness,
  } = process;
  if (config.port === undefined) return undefined;
  const server = http.createServer((req, res) => {
    const answer = (status: number, type: string, body: string) => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    };
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') return answer(405, 'text/plain', 'GET only\n');
    if (path === '/ready') {
      readiness().then(
        (state) => answer(state.ready ? 200 : 503, 'application/json', JSON.stringify(state)),
        () => answer(503, 'application/json', JSON.stringify({ ready: false })),
      );
      return;
    }
    if (path !== METRICS_PATH) return answer(404, 'text/plain', 'not found\n');
    if (config.token !== undefined && !bearerMatches(req.headers.authorization, config.token)) {
      return answer(401, 'text/plain', 'a valid bearer token is required\n');
    }
    metrics.exposition().then(
      ({ body, contentType }) => answer(200, contentType, body),
      () => answer(500, 'text/plain', 'metrics could not be collected\n'),
    );
  });
  // Scrapes are short; nothing keeps a connection open for long.
  server.headersTimeout = 10_000;
  server.requestTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { address, port } = server.address() as AddressInfo;
  return {
    address: `http://${address.includes(':') ? `[${address}]` : address}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
