import { createHash, randomBytes } from 'node:crypto';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { publishedListingFixture } from '../support/listings.js';

/** A raw connection that records what the server sends and when it closes the connection. */
function rawConnection(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  const opened = Date.now();
  let received = Buffer.alloc(0);
  socket.on('data', (chunk) => {
    received = Buffer.concat([received, chunk]);
  });
  socket.on('error', () => {});
  const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(Date.now() - opened)));
  return {
    socket,
    bytes: () => received,
    received: () => received.toString('utf8'),
    /** Milliseconds from connecting until the server closed, or `undefined` if still open after `waitMs`. */
    closedWithin: (waitMs: number) =>
      Promise.race([closed, new Promise<undefined>((resolve) => setTimeout(resolve, waitMs))]),
  };
}

const errorBody = (raw: string) => JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));

describe('HTTP timeouts (1 s headers and keep-alive, 2 s whole request)', () => {
  let t: TestApp;
  let port: number;
  let base: string;

  beforeAll(async () => {
    t = await createTestApp({
      env: {
        HTTP_HEADERS_TIMEOUT_SECONDS: '1',
        HTTP_REQUEST_TIMEOUT_SECONDS: '2',
        HTTP_KEEP_ALIVE_TIMEOUT_SECONDS: '1',
        MCP_STREAM_SECONDS: '4',
      },
    });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as net.AddressInfo).port;
  });
  afterAll(() => t?.close());

  it('answers a request whose body never finishes with invalid_request and closes it', async () => {
    const conn = rawConnection(port);
    conn.socket.write(
      'POST /api/creators HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"handle":',
    );
    const closedAfter = await conn.closedWithin(8000);
    expect(closedAfter, 'still open 8 s after a 2 s request timeout').toBeDefined();
    expect(closedAfter!).toBeGreaterThanOrEqual(1500);
    expect(conn.received()).toMatch(/^HTTP\/1\.1 400 /);
    const body = errorBody(conn.received());
    expect(body).toMatchObject({ code: 'invalid_request', docs_url: expect.any(String) });
    expect(body.details.issues).toEqual([{ field: 'request', reason: 'request not received in time' }]);
  });

  it('answers a request whose headers never finish, and closes a connection that sends nothing without a word', async () => {
    const trickle = rawConnection(port);
    trickle.socket.write('GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
    // A byte now and then must not extend the headers deadline.
    const drip = setInterval(() => trickle.socket.write('a'), 200);
    const silent = rawConnection(port);
    try {
      const [trickleClosed, silentClosed] = await Promise.all([
        trickle.closedWithin(6000),
        silent.closedWithin(6000),
      ]);
      expect(trickleClosed, 'trickling headers held the connection').toBeDefined();
      expect(silentClosed, 'a silent connection was held').toBeDefined();
      expect(trickle.received()).toMatch(/^HTTP\/1\.1 400 /);
      expect(errorBody(trickle.received()).code).toBe('invalid_request');
      // A browser's spare connection: no request began, so no answer a later request could
      // mistake for its own (a browser retries a request on a connection closed silently).
      expect(silent.received()).toBe('');
    } finally {
      clearInterval(drip);
      trickle.socket.destroy();
      silent.socket.destroy();
    }
  });

  it('answers a request begun on a kept-alive connection that then stalls, and nothing else on it', async () => {
    const conn = rawConnection(port);
    conn.socket.write('GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(conn.received()).toMatch(/^HTTP\/1\.1 200 /);
    const first = conn.received().length;
    conn.socket.write('GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
    expect(await conn.closedWithin(6000), 'a stalled second request held the connection').toBeDefined();
    const second = conn.received().slice(first);
    expect(second).toMatch(/^HTTP\/1\.1 400 /);
    expect(errorBody(second).details.issues).toEqual([
      { field: 'request', reason: 'request not received in time' },
    ]);
  });

  it('closes a kept-alive connection that stays idle after its response', async () => {
    const conn = rawConnection(port);
    conn.socket.write('GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    const closedAfter = await conn.closedWithin(6000);
    conn.socket.destroy();
    expect(closedAfter, 'an idle keep-alive connection was held').toBeDefined();
    expect(conn.received()).toMatch(/^HTTP\/1\.1 200 /);
  });

  it('does not cut a quiet MCP notification stream that outlives every HTTP timeout', async () => {
    const started = Date.now();
    const response = await fetch(`${base}/api/mcp`, { headers: { accept: 'text/event-stream' } });
    expect(response.status).toBe(200);
    const text = await response.text();
    // MCP_STREAM_SECONDS (4 s) ends it, not the 1–2 s HTTP timeouts.
    expect(Date.now() - started).toBeGreaterThanOrEqual(3500);
    expect(text).toContain('keep-alive comments only');
  });

  it('does not cut a download whose reader pauses longer than every HTTP timeout', async () => {
    // Random data barely compresses: the zip (~18 MB) is larger than the socket buffers, so the
    // server waits on the paused reader with nothing flowing.
    const fixture = await publishedListingFixture(t, {
      priceMicro: 0n,
      updatePriceMicro: 0n,
      releases: [
        {
          version: '1.0.0',
          verdict: 'pass',
          files: { 'data.txt': randomBytes(18 * 1024 * 1024).toString('base64') },
        },
      ],
    });
    const grant = await t.app.inject({ url: `/api/r/${fixture.owner}/${fixture.slug}` });
    expect(grant.statusCode, grant.body).toBe(200);
    const url = new URL(grant.json().download_url);
    const conn = rawConnection(port);
    conn.socket.pause();
    conn.socket.write(`GET ${url.pathname} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
    await new Promise((resolve) => setTimeout(resolve, 4000));
    conn.socket.resume();
    expect(await conn.closedWithin(30_000), 'download did not finish').toBeDefined();
    const raw = conn.bytes();
    expect(raw.subarray(0, 15).toString()).toBe('HTTP/1.1 200 OK');
    const expected = fixture.zips.get('1.0.0')!;
    const headerEnd = raw.indexOf('\r\n\r\n');
    const body = raw.subarray(headerEnd + 4);
    expect(body.length).toBe(expected.bytes.length);
    expect(createHash('sha256').update(body).digest('hex')).toBe(expected.sha256);
  }, 120_000);
});

describe('HTTP timeout configuration', () => {
  it('refuses a headers timeout longer than the whole-request timeout, naming both variables', () => {
    expect(() =>
      loadConfig({ HTTP_HEADERS_TIMEOUT_SECONDS: '60', HTTP_REQUEST_TIMEOUT_SECONDS: '30' }),
    ).toThrow(ConfigError);
    expect(() =>
      loadConfig({ HTTP_HEADERS_TIMEOUT_SECONDS: '60', HTTP_REQUEST_TIMEOUT_SECONDS: '30' }),
    ).toThrow(/HTTP_HEADERS_TIMEOUT_SECONDS.*HTTP_REQUEST_TIMEOUT_SECONDS/);
    expect(() => loadConfig({ HTTP_REQUEST_TIMEOUT_SECONDS: '0' })).toThrow(/HTTP_REQUEST_TIMEOUT_SECONDS/);
    expect(() => loadConfig({ HTTP_KEEP_ALIVE_TIMEOUT_SECONDS: 'soon' })).toThrow(
      /HTTP_KEEP_ALIVE_TIMEOUT_SECONDS/,
    );
  });
});
