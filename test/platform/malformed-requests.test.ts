import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ERROR_CODES, ERRORS, type ErrorCode } from '../../src/platform/errors.js';
import { errorResponses } from '../../src/platform/http/schemas.js';
import { MicroUsdcInput } from '../../src/platform/money/money.js';
import { createTestApp, TEST_BASE_URL, type TestApp } from '../support/app.js';
import { type RawResponse, rawRequest } from '../support/raw-http.js';

/**
 * Hundreds of malformed requests against every route the OpenAPI document lists (plus one route
 * with a body and query schema, so validation is exercised before later issues add their own):
 * every failure must be the spec's error body with a known code, the code's status, and no 500.
 */

interface Case {
  name: string;
  bytes: string | Buffer;
}

function request(method: string, path: string, headers: Record<string, string> = {}, body = ''): string {
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close'];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  if (body && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-length')) {
    lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  }
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}

const BAD_JSON = [
  '{',
  '}',
  '[1,',
  '{"a":}',
  '{"a":1,}',
  "{'a':1}",
  'nul',
  'tru',
  '{"a":"\\x"}',
  '\u0000\u0001\u0002',
  '{"a":1}{"b":2}',
  '{"__proto__":{"polluted":true}}',
  '{"constructor":{"prototype":{"polluted":true}}}',
  '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[',
  `${'['.repeat(20000)}${']'.repeat(20000)}`,
];

const WRONG_TYPES = [
  '123',
  '"a string"',
  'null',
  'true',
  '[]',
  '{}',
  '{"name":1,"amount":"5"}',
  '{"name":"x","amount":5}',
  '{"name":"x","amount":"5.5"}',
  '{"name":"x","amount":"-1"}',
  '{"name":"x","amount":"1e6"}',
  '{"name":"x","amount":"99999999999999999999"}',
  '{"name":"","amount":"5"}',
  `{"name":"${'x'.repeat(51)}","amount":"5"}`,
  '{"name":"x","amount":"5","unknown":true}',
  '{"name":"x","amount":"5","tags":"nope"}',
  '{"name":"x","amount":"5","tags":[1,2]}',
  '{"name":"x","amount":"5","tags":["a","b","c","d","e","f"]}',
  '{"name":null,"amount":null}',
  '{"name":["x"],"amount":{"v":"5"}}',
];

const CONTENT_TYPES = [
  'text/plain',
  'application/xml',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/octet-stream',
  'application/json; charset=latin1',
  'application/jsonx',
  ';;;',
];

const UNKNOWN_PATHS = [
  '/nope',
  '/api',
  '/api/',
  '/api/nope',
  '/api/health/extra',
  '/api/v/',
  '/api/r',
  '/../../etc/passwd',
  '/%2e%2e/%2e%2e/etc/passwd',
  '/api/%00',
  '/api/health%00',
  '/%ff%fe',
  '/ünïcödé',
  '/%F0%9F%92%A9',
  '//api//health',
  '/api/health;jsessionid=1',
  '/.env',
  '/.git/config',
  '/wp-admin/',
  '/favicon.ico',
  `/${'a'.repeat(4000)}`,
  '/api/terms/../../../etc',
  '/docs/../../../etc/passwd',
  '/static/../package.json',
  '/static/site.css/..%2f..%2fpackage.json',
];

const ODD_METHODS = [
  'PUT',
  'PATCH',
  'DELETE',
  'POST',
  'PROPFIND',
  'MKCOL',
  'LOCK',
  'SEARCH',
  'PURGE',
  'CONNECT',
];

const BAD_HEADERS: Case[] = [
  {
    name: 'non-numeric content-length',
    bytes: request('POST', '/test/echo', { 'Content-Length': 'abc' }, '{}'),
  },
  {
    name: 'two different content-lengths',
    bytes: 'POST /test/echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 5\r\n\r\n{}',
  },
  {
    name: 'content-length with transfer-encoding',
    bytes: 'POST /test/echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}',
  },
  {
    name: 'unknown transfer-encoding',
    bytes: 'POST /test/echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, foo\r\n\r\n{}',
  },
  { name: 'header without colon', bytes: 'GET /api/health HTTP/1.1\r\nHost: x\r\nNoColonHere\r\n\r\n' },
  {
    name: 'control character in header',
    bytes: 'GET /api/health HTTP/1.1\r\nHost: x\r\nX-A: a\u0001b\r\n\r\n',
  },
  { name: 'space before colon', bytes: 'GET /api/health HTTP/1.1\r\nHost: x\r\nX-A : b\r\n\r\n' },
  {
    name: 'huge header',
    bytes: `GET /api/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20000)}\r\n\r\n`,
  },
  {
    name: 'too many headers',
    bytes: `GET /api/health HTTP/1.1\r\nHost: x\r\n${Array.from({ length: 3000 }, (_, i) => `X-${i}: y`).join('\r\n')}\r\n\r\n`,
  },
  { name: 'HTTP/1.1 without Host', bytes: 'GET /api/health HTTP/1.1\r\nConnection: close\r\n\r\n' },
  { name: 'HTTP/1.1 POST without Host', bytes: 'POST /test/echo HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}' },
  { name: 'garbage request line', bytes: 'HELLO THERE\r\n\r\n' },
  {
    name: 'binary garbage',
    bytes: Buffer.from([0x16, 0x03, 0x01, 0x00, 0xff, 0x01, 0x00, 0x00, 0x0d, 0x0a, 0x0d, 0x0a]),
  },
  { name: 'unknown method', bytes: 'FOO /api/health HTTP/1.1\r\nHost: x\r\n\r\n' },
  { name: 'unknown http version', bytes: 'GET /api/health HTTP/9.9\r\nHost: x\r\n\r\n' },
  { name: 'lowercase method', bytes: 'get /api/health HTTP/1.1\r\nHost: x\r\n\r\n' },
  {
    name: 'bad chunk size',
    bytes:
      'POST /test/echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
  },
  { name: 'space in path', bytes: 'GET /api/he alth HTTP/1.1\r\nHost: x\r\n\r\n' },
  { name: 'tab in path', bytes: 'GET /api/he\talth HTTP/1.1\r\nHost: x\r\n\r\n' },
  { name: 'bad percent encoding', bytes: 'GET /api/%zz HTTP/1.1\r\nHost: x\r\n\r\n' },
  {
    name: 'header injection in request id',
    bytes: 'GET /api/health HTTP/1.1\r\nHost: x\r\nX-Request-Id: a\rb\r\n\r\n',
  },
  { name: 'obsolete line folding', bytes: 'GET /api/health HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\n\r\n' },
  {
    name: 'body larger than declared JSON limit, chunked',
    bytes: `POST /test/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${(2 * 1024 * 1024).toString(16)}\r\n${'a'.repeat(2 * 1024 * 1024)}\r\n0\r\n\r\n`,
  },
];

describe('malformed requests', () => {
  let t: TestApp;
  let port: number;
  let routes: { method: string; path: string }[];

  beforeAll(async () => {
    t = await createTestApp({
      extend: (app) => {
        app.post(
          '/test/echo',
          {
            schema: {
              body: z.strictObject({
                name: z.string().min(1).max(50),
                amount: MicroUsdcInput,
                tags: z.array(z.string()).max(5).optional(),
              }),
              querystring: z.strictObject({ limit: z.coerce.number().int().min(1).max(100).optional() }),
              response: { 200: z.object({ ok: z.boolean() }), ...errorResponses('invalid_request') },
            },
          },
          async () => ({ ok: true }),
        );
      },
    });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as AddressInfo).port;
    const doc = t.app.swagger() as { paths: Record<string, Record<string, unknown>> };
    routes = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => ({
        method: method.toUpperCase(),
        path: path.replace(/\{[^}]+\}/g, 'x'),
      })),
    );
    routes.push({ method: 'POST', path: '/test/echo' });
  });
  afterAll(async () => t.close());

  function cases(): Case[] {
    const all: Case[] = [];
    const bodyPaths = [...new Set(routes.map((r) => r.path))];
    for (const path of bodyPaths) {
      for (const body of BAD_JSON) {
        all.push({
          name: `bad JSON to ${path}`,
          bytes: request('POST', path, { 'Content-Type': 'application/json' }, body),
        });
      }
      for (const type of CONTENT_TYPES) {
        all.push({
          name: `${type} to ${path}`,
          bytes: request('POST', path, { 'Content-Type': type }, 'a=1'),
        });
      }
      all.push({
        name: `huge body to ${path}`,
        bytes: request(
          'POST',
          path,
          { 'Content-Type': 'application/json' },
          `{"a":"${'x'.repeat(2 * 1024 * 1024)}"}`,
        ),
      });
      all.push({
        name: `empty JSON body to ${path}`,
        bytes: request('POST', path, { 'Content-Type': 'application/json', 'Content-Length': '0' }),
      });
      for (const method of ODD_METHODS) all.push({ name: `${method} ${path}`, bytes: request(method, path) });
      all.push({
        name: `repeated query on ${path}`,
        bytes: request('GET', `${path}?limit=1&limit=2&cursor=%zz&a[b]=c`),
      });
    }
    for (const body of WRONG_TYPES) {
      all.push({
        name: `wrong types ${body.slice(0, 40)}`,
        bytes: request('POST', '/test/echo', { 'Content-Type': 'application/json' }, body),
      });
    }
    for (const query of [
      'limit=0',
      'limit=101',
      'limit=abc',
      'limit=1.5',
      'limit=',
      'other=1',
      'limit=1&limit=2',
    ]) {
      all.push({
        name: `query ${query}`,
        bytes: request(
          'POST',
          `/test/echo?${query}`,
          { 'Content-Type': 'application/json' },
          '{"name":"x","amount":"1"}',
        ),
      });
    }
    for (const path of UNKNOWN_PATHS) {
      for (const method of ['GET', 'POST', 'DELETE'])
        all.push({ name: `${method} ${path}`, bytes: request(method, path) });
    }
    return [...all, ...BAD_HEADERS];
  }

  function assertErrorBody(name: string, res: RawResponse) {
    expect(res.status, name).not.toBe(500);
    expect(res.headers['x-request-id'], `${name}: x-request-id`).toBeTruthy();
    if (res.status < 400) return;
    let body: { code: ErrorCode; message: unknown; docs_url: unknown };
    try {
      body = JSON.parse(res.body);
    } catch {
      throw new Error(`${name}: not JSON: ${res.status} ${res.body.slice(0, 200)}`);
    }
    expect(ERROR_CODES, `${name}: ${res.body}`).toContain(body.code);
    expect(res.status, `${name}: status of ${body.code}`).toBe(ERRORS[body.code].status);
    expect(typeof body.message, name).toBe('string');
    expect(body.docs_url, name).toBe(`${TEST_BASE_URL}/docs/errors#${body.code}`);
    expect(res.body, name).not.toMatch(/at .*\.(ts|js):\d+/);
  }

  it('answers every one with the error body, a known code and its status', async () => {
    const all = cases();
    expect(all.length).toBeGreaterThan(300);
    const seen = new Map<string, number>();
    for (const c of all) {
      const res = await rawRequest(port, c.bytes).catch((error: Error) => {
        throw new Error(`${c.name}: ${error.message}`);
      });
      assertErrorBody(c.name, res);
      if (res.status >= 400) {
        const code = JSON.parse(res.body).code as string;
        seen.set(code, (seen.get(code) ?? 0) + 1);
      }
    }
    // Besides refusing the input, a route may first want a credential (a bearer key or a wallet
    // signature) or run out of budget (registration allows 5 an hour); nothing else is acceptable.
    expect([...seen.keys()]).toEqual(expect.arrayContaining(['invalid_request', 'not_found']));
    const allowed = ['invalid_request', 'not_found', 'invalid_key', 'invalid_signature', 'rate_limited'];
    expect([...seen.keys()].filter((code) => !allowed.includes(code))).toEqual([]);
    // Hundreds of requests, one per case and route: slow on a loaded two-core machine.
  }, 180_000);

  it('answers a path segment longer than the router takes as not found, which every such route documents', async () => {
    // Issue 19's fuzz: this was a 400 that GET /{owner}/{slug} and the label route never document.
    const long = 'a'.repeat(600);
    for (const url of [
      `/${long}/kit`,
      `/api/label/${long}/kit`,
      `/api/listings/${long}`,
      `/api/download/${long}`,
    ]) {
      const res = await t.app.inject({ url });
      expect({ url, status: res.statusCode, code: res.json().code }).toEqual({
        url,
        status: 404,
        code: 'not_found',
      });
    }
  });

  it('names each failing field in details.issues', async () => {
    const res = await rawRequest(
      port,
      request(
        'POST',
        '/test/echo?limit=500&x=1',
        { 'Content-Type': 'application/json' },
        '{"name":"a","amount":"1"}',
      ),
    );
    expect(res.status).toBe(400);
    const fields = JSON.parse(res.body).details.issues.map((i: { field: string }) => i.field);
    expect(fields).toEqual(['limit', 'x']);
    const body = await rawRequest(
      port,
      request(
        'POST',
        '/test/echo',
        { 'Content-Type': 'application/json' },
        '{"name":"","amount":"1.5","extra":1}',
      ),
    );
    const issues = JSON.parse(body.body).details.issues as { field: string; reason: string }[];
    expect(issues.map((i) => i.field)).toEqual(['name', 'amount', 'extra']);
    expect(issues.every((i) => i.reason.length > 0)).toBe(true);
  });

  it('accepts the well-formed request', async () => {
    const res = await rawRequest(
      port,
      request(
        'POST',
        '/test/echo?limit=5',
        { 'Content-Type': 'application/json' },
        '{"name":"x","amount":"9000000"}',
      ),
    );
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ ok: true });
  });

  it('asks an HTTP/1.1 request for its Host, and serves HTTP/1.0, which needs none', async () => {
    const missing = await rawRequest(port, 'GET /api/health HTTP/1.1\r\nConnection: close\r\n\r\n');
    expect(missing.status).toBe(400);
    expect(JSON.parse(missing.body)).toMatchObject({
      code: 'invalid_request',
      details: { issues: [{ field: 'host', reason: 'an HTTP/1.1 request must carry a Host header' }] },
    });
    const old = await rawRequest(port, 'GET /api/health HTTP/1.0\r\n\r\n');
    expect(old.status).toBe(200);
  });

  it('keeps a safe caller request id and replaces an unsafe one', async () => {
    const kept = await rawRequest(port, request('GET', '/api/health', { 'X-Request-Id': 'trace-123.abc' }));
    expect(kept.headers['x-request-id']).toBe('trace-123.abc');
    const replaced = await rawRequest(port, request('GET', '/api/health', { 'X-Request-Id': '<script>' }));
    expect(replaced.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});
