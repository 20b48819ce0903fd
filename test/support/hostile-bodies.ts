import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { performance } from 'node:perf_hooks';

/**
 * A flood of deeply nested JSON bodies from one address, and a reader timing its own requests
 * from another, as an outside review ran them: what the body-depth and body-size limits defend
 * (issue 34). The timing test and `bench/hostile-bodies.ts` share it.
 */

export interface BodyRoute {
  method: string;
  /** With any `{id}` filled by a random uuid: key routes refuse before reading, as for a stranger. */
  path: string;
  /** `x-body-limit-bytes` of the operation. */
  limit: number;
}

/** Every operation of the served OpenAPI document that takes a body, with its body limit. */
export async function bodyRoutes(base: string): Promise<BodyRoute[]> {
  const doc = (await (await fetch(`${base}/api/openapi.json`)).json()) as {
    paths: Record<string, Record<string, { requestBody?: unknown; 'x-body-limit-bytes'?: number }>>;
  };
  return Object.entries(doc.paths).flatMap(([path, operations]) =>
    Object.entries(operations)
      .filter(([, operation]) => operation.requestBody)
      .map(([method, operation]) => ({
        method: method.toUpperCase(),
        path: path.replace(/\{[^}]+\}/g, randomUUID()),
        limit: operation['x-body-limit-bytes'] ?? 0,
      })),
  );
}

/** `[` × n then `]` × n, `bytes` long: the cheapest text to send and, parsed, the dearest. */
export function nestedBody(bytes: number): Buffer {
  const half = Math.floor(bytes / 2);
  return Buffer.from(`${'['.repeat(half)}${']'.repeat(half)}`);
}

interface Answer {
  status: number;
  ms: number;
}

function send(
  agent: http.Agent,
  base: URL,
  request: { method: string; path: string; body?: Buffer; headers?: Record<string, string> },
): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        agent,
        host: base.hostname,
        port: base.port,
        method: request.method,
        path: request.path,
        headers: {
          ...(request.body
            ? { 'content-type': 'application/json', 'content-length': String(request.body.length) }
            : {}),
          ...request.headers,
        },
        timeout: 30_000,
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${request.method} ${request.path}: no answer in 30 s`)));
    req.on('error', reject);
    req.end(request.body);
  });
}

export interface FloodReport {
  requests: number;
  /** Answers by status; `0` counts requests that failed without one (a connection reset). */
  statuses: Record<number, number>;
  seconds: number;
}

/**
 * From `localAddress`, on `connections` kept-alive connections at once, POSTs (PATCHes, PUTs)
 * nested bodies round-robin to `routes` until `seconds` have passed: each body the size of its
 * route's limit, or `bodyBytes` when given (the review's 1 MB). With `apiKey`, the key routes read
 * the bodies too.
 */
export async function floodNestedBodies(options: {
  base: string;
  routes: BodyRoute[];
  seconds: number;
  connections: number;
  localAddress: string;
  bodyBytes?: number;
  apiKey?: string;
}): Promise<FloodReport> {
  const base = new URL(options.base);
  const agent = new http.Agent({
    keepAlive: true,
    maxSockets: options.connections,
    localAddress: options.localAddress,
  });
  const bodies = options.routes.map((route) => nestedBody(options.bodyBytes ?? route.limit));
  const statuses: Record<number, number> = {};
  const started = performance.now();
  const stopAt = started + options.seconds * 1000;
  let next = 0;
  const worker = async () => {
    while (performance.now() < stopAt) {
      const index = next++ % options.routes.length;
      const route = options.routes[index]!;
      const status = await send(agent, base, {
        method: route.method,
        path: route.path,
        body: bodies[index],
        headers: {
          accept: 'application/json, text/event-stream',
          ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
        },
      }).then(
        (answer) => answer.status,
        () => 0,
      );
      statuses[status] = (statuses[status] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: options.connections }, worker));
  agent.destroy();
  const requests = Object.values(statuses).reduce((sum, n) => sum + n, 0);
  return { requests, statuses, seconds: (performance.now() - started) / 1000 };
}

export interface ReadTimes {
  path: string;
  ms: number[];
  statuses: number[];
  p50: number;
  p99: number;
  max: number;
}

/**
 * From `localAddress`, one request at a time, each of `paths` in turn every `intervalMs` until
 * `seconds` have passed; the time of every answer, per path.
 */
export async function timeReads(options: {
  base: string;
  paths: string[];
  seconds: number;
  localAddress: string;
  intervalMs: number;
}): Promise<ReadTimes[]> {
  const base = new URL(options.base);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1, localAddress: options.localAddress });
  const times = new Map(
    options.paths.map((path) => [path, { ms: [] as number[], statuses: [] as number[] }]),
  );
  const stopAt = performance.now() + options.seconds * 1000;
  while (performance.now() < stopAt) {
    for (const path of options.paths) {
      const answer = await send(agent, base, { method: 'GET', path });
      times.get(path)!.ms.push(answer.ms);
      times.get(path)!.statuses.push(answer.status);
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs));
  }
  agent.destroy();
  return options.paths.map((path) => {
    const { ms, statuses } = times.get(path)!;
    const sorted = [...ms].sort((a, b) => a - b);
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
    return { path, ms, statuses, p50: at(0.5), p99: at(0.99), max: sorted.at(-1) ?? 0 };
  });
}
