import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
};
const BOTH = 'application/json, text/event-stream';

describe('MCP endpoint transport', () => {
  let t: TestApp;
  let base: string;

  beforeEach(async () => {
    t = await createTestApp({ env: { MCP_STREAMS_PER_IP: '2', MCP_STREAM_SECONDS: '1' } });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterEach(() => t.close());

  it('initializes and answers ping through the official client', async () => {
    const client = new Client({ name: 'test', version: '1' });
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/api/mcp`));
    await client.connect(transport);
    expect(client.getServerVersion()?.name).toBe('repo402');
    expect(client.getInstructions()).toMatch(/purchase/);
    await expect(client.ping()).resolves.toBeDefined();
    await transport.terminateSession();
    await client.close();
  });

  it('answers a JSON-RPC POST with JSON and the request id header', async () => {
    const response = await fetch(`${base}/api/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: BOTH },
      body: JSON.stringify(INIT),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/application\/json/);
    expect(response.headers.get('x-request-id')).toBeTruthy();
    const body = await response.json();
    expect(body).toMatchObject({ jsonrpc: '2.0', id: 1, result: { serverInfo: { name: 'repo402' } } });
  });

  it.each(['application/json', '*/*', undefined])(
    'refuses a POST with Accept %s (both types must be listed) with the error body',
    async (accept) => {
      const response = await fetch(`${base}/api/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(accept ? { accept } : {}) },
        body: JSON.stringify(INIT),
      });
      expect(response.status).toBe(400);
      const body = await response.json();
      expect(body.code).toBe('invalid_request');
      expect(body.details.issues[0].field).toBe('accept');
    },
  );

  it('refuses an unknown MCP-Protocol-Version and a body that is not JSON-RPC', async () => {
    const bad = await fetch(`${base}/api/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: BOTH, 'mcp-protocol-version': '1999-01-01' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }),
    });
    expect(bad.status).toBe(400);
    expect((await bad.json()).details.issues[0].field).toBe('mcp-protocol-version');

    const notRpc = await fetch(`${base}/api/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: BOTH },
      body: JSON.stringify({ hello: 'world' }),
    });
    expect(notRpc.status).toBe(400);
    expect((await notRpc.json()).code).toBe('invalid_request');

    const malformed = await fetch(`${base}/api/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: BOTH },
      body: '{"jsonrpc":',
    });
    expect(malformed.status).toBe(400);
    expect((await malformed.json()).code).toBe('invalid_request');

    // Issue 19's fuzz: envelopes our schema let through but the SDK refuses (no method nor result,
    // params not an object, an extra field) got the SDK's JSON-RPC parse error, not our error body.
    for (const envelope of [
      { jsonrpc: '2.0' },
      { jsonrpc: '2.0', id: 3, method: 'ping', params: 'x' },
      { jsonrpc: '2.0', id: 4, method: 'ping', extra: true },
    ]) {
      const res = await fetch(`${base}/api/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: BOTH },
        body: JSON.stringify(envelope),
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({
        code: 'invalid_request',
        details: { issues: [{ field: 'body' }] },
      });
    }

    // A known method with params its schema refuses got the SDK's -32603 quoting a Zod dump.
    for (const [envelope, field] of [
      [{ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 5 } }, 'params.name'],
      [
        { jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'get_listing', arguments: 'x' } },
        'params.arguments',
      ],
      [{ jsonrpc: '2.0', id: 7, method: 'tools/call' }, 'params'],
      [{ jsonrpc: '2.0', id: 8, method: 'initialize', params: {} }, 'params.protocolVersion'],
    ] as const) {
      const res = await fetch(`${base}/api/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: BOTH },
        body: JSON.stringify(envelope),
      });
      expect(res.status, envelope.method).toBe(400);
      const body = await res.json();
      expect(body.code).toBe('invalid_request');
      expect(body.details.issues[0].field, JSON.stringify(body)).toBe(field);
    }
    // An unknown method is the protocol's own answer: JSON-RPC "method not found".
    const unknown = await fetch(`${base}/api/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: BOTH },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'no/such', params: {} }),
    });
    expect((await unknown.json()).error?.code).toBe(-32601);

    // DELETE takes no body, but one that does not parse is a documented 400, not a fault.
    const deleted = await fetch(`${base}/api/mcp`, {
      method: 'DELETE',
      headers: { 'content-type': 'application/json' },
      body: '{',
    });
    expect(deleted.status).toBe(400);
    expect((await deleted.json()).code).toBe('invalid_request');
    expect(t.app.swagger().paths?.['/api/mcp']?.delete?.responses).toHaveProperty('400');
  });

  it('GET opens a quiet SSE stream that ends after its lifetime; the per-IP cap refuses more', async () => {
    const first = await fetch(`${base}/api/mcp`, { headers: { accept: 'text/event-stream' } });
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toBe('text/event-stream');
    const second = await fetch(`${base}/api/mcp`, { headers: { accept: 'text/event-stream' } });
    expect(second.status).toBe(200);
    const third = await fetch(`${base}/api/mcp`, { headers: { accept: 'text/event-stream' } });
    expect(third.status).toBe(429);
    const refused = await third.json();
    expect(refused.code).toBe('rate_limited');
    expect(refused.retry_after_seconds).toBeGreaterThan(0);
    expect(third.headers.get('retry-after')).toBe(String(refused.retry_after_seconds));

    // The lifetime (1 s here) ends the stream; only comments were sent.
    const text = await first.text();
    expect(text.split('\n').filter((line) => line && !line.startsWith(':'))).toEqual([]);
    await second.text();
    const again = await fetch(`${base}/api/mcp`, { headers: { accept: 'text/event-stream' } });
    expect(again.status).toBe(200);
    await again.body?.cancel();
  });

  it('a client that leaves releases its stream slot', async () => {
    for (let i = 0; i < 5; i++) {
      const controller = new AbortController();
      const response = await fetch(`${base}/api/mcp`, {
        headers: { accept: 'text/event-stream' },
        signal: controller.signal,
      });
      expect(response.status).toBe(200);
      controller.abort();
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });

  it('GET without text/event-stream in Accept is invalid; DELETE answers 200', async () => {
    const get = await fetch(`${base}/api/mcp`, { headers: { accept: 'application/json' } });
    expect(get.status).toBe(400);
    expect((await get.json()).code).toBe('invalid_request');
    const del = await fetch(`${base}/api/mcp`, { method: 'DELETE' });
    expect(del.status).toBe(200);
  });

  it('closing the app ends open notification streams', async () => {
    const response = await fetch(`${base}/api/mcp`, { headers: { accept: 'text/event-stream' } });
    const done = response.text();
    await t.app.close();
    await expect(done).resolves.toContain('keep-alive comments only');
  });
});
