import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BODY_LIMITS,
  JSON_MAX_DEPTH,
  nestsDeeperThan,
  parseClientJson,
} from '../../src/platform/http/json-body.js';
import { decodePaymentSignature } from '../../src/x402/payment-header.js';
import { bearer, freshIp, registerCreator } from '../identity/support.js';
import { createHostedListing, sshKeygen } from '../listings/support.js';
import { createTestApp, RATE_LIMIT_STORES, type TestApp } from '../support/app.js';
import { openApiRoutes } from '../support/openapi-routes.js';

/** Text at a field's maximum length in characters, each three bytes of UTF-8. */
const widest = (characters: number) => '€'.repeat(characters);
const SIGNATURE = `0x${'ab'.repeat(9_999)}`; // 20,000 characters, the schema's maximum
const ADDRESS = `0x${'1'.repeat(40)}`;
const NONCE = 'n'.repeat(128);
const MAX_MICRO = '1000000000000000';

/**
 * The largest body each operation accepts, every field at its schema's maximum: what the route's
 * body limit must admit. `listing` is a hosted listing's id, for the routes under it.
 */
function largestBodies(listing: string): Record<string, unknown> {
  const signed = { nonce: NONCE, signature: SIGNATURE };
  return {
    'POST /api/auth/rotate-key': { address: ADDRESS, ...signed },
    'POST /api/auth/sessions': { address: ADDRESS, ...signed },
    'POST /api/auth/wallet-sessions': { address: ADDRESS, ...signed },
    'POST /api/devnet/faucet': { address: ADDRESS },
    'POST /api/webhooks': {
      url: `https://${'h'.repeat(60)}.example/${'p'.repeat(1900)}`,
      events: ['release.published', 'release.advisory', 'release.yanked'],
      listing: `${'o'.repeat(64)}/${'s'.repeat(64)}`,
    },
    'POST /api/creators/me/webhooks': {
      url: `https://${'h'.repeat(60)}.example/${'p'.repeat(1900)}`,
      events: ['sale', 'release.cut', 'release.scan_failed', 'listing.suspended', 'report.received'],
    },
    'POST /api/creators': {
      handle: 'h'.repeat(39),
      payout_address: ADDRESS,
      accepted_terms_version: widest(64),
      address_proof: signed,
      invite_code: widest(200),
      abuse_contact: `${'a'.repeat(240)}@example.com`,
    },
    'PATCH /api/creators/me': {
      payout_address: ADDRESS,
      abuse_contact: `${'a'.repeat(240)}@example.com`,
      step_up: signed,
      address_proof: signed,
    },
    'POST /api/listings': {
      source: 'hosted',
      slug: 's'.repeat(39),
      ssh_public_key: `ssh-rsa ${'A'.repeat(16_376)}`,
      price_micro: MAX_MICRO,
      update_price_micro: MAX_MICRO,
      description: widest(5000),
      trigger_hint: widest(1000),
    },
    [`PATCH /api/listings/${listing}`]: {
      price_micro: MAX_MICRO,
      update_price_micro: MAX_MICRO,
      description: widest(5000),
      trigger_hint: widest(1000),
    },
    [`PUT /api/listings/${listing}/ssh-key`]: { ssh_public_key: `ssh-rsa ${'A'.repeat(16_376)}` },
    [`POST /api/listings/${listing}/licence`]: { spdx: widest(64) },
    [`POST /api/listings/${listing}/sync`]: { ref: widest(512), version: widest(32) },
    'POST /api/reports': {
      listing: widest(200),
      version: widest(32),
      category: 'secret_exposed',
      text: widest(4000),
    },
    'POST /api/mcp': {
      jsonrpc: '2.0',
      id: 2_147_483_647,
      method: 'tools/call',
      params: {
        name: 'purchase',
        arguments: {
          owner: 'o'.repeat(64),
          slug: 's'.repeat(64),
          payment_signature: 'P'.repeat(16_384),
          quote_id: 'q'.repeat(4096),
          wallet_signature: 'W'.repeat(4096),
          address: ADDRESS,
        },
        _meta: { progressToken: widest(100) },
      },
    },
  };
}

describe('a JSON nesting scan', () => {
  it('counts arrays and objects, not brackets inside strings or after an escaped quote', () => {
    expect(nestsDeeperThan('[[[]]]', 3)).toBe(false);
    expect(nestsDeeperThan('[[[[]]]]', 3)).toBe(true);
    expect(nestsDeeperThan('{"a":{"b":[{}]}}', 4)).toBe(false);
    expect(nestsDeeperThan('{"a":{"b":[{}]}}', 3)).toBe(true);
    expect(nestsDeeperThan('["[[[[[[", "{{{{{"]', 1)).toBe(false);
    expect(nestsDeeperThan('["\\"[[[[", "\\\\", [[[]]]]', 3)).toBe(true);
    expect(nestsDeeperThan('["\\"[[[[", "\\\\", [[]]]', 3)).toBe(false);
    // Siblings do not add up: depth is how deep, not how many.
    expect(nestsDeeperThan(`[${'[],'.repeat(1000)}[]]`, 2)).toBe(false);
  });
});

describe('JSON a client sends in a header', () => {
  it('is refused past the depth limit before it is parsed', () => {
    const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
    expect(() => parseClientJson(deep)).toThrow(`nested deeper than ${JSON_MAX_DEPTH} levels`);
    expect(parseClientJson('{"a":[1]}')).toEqual({ a: [1] });
    expect(() => decodePaymentSignature(Buffer.from(deep).toString('base64'))).toThrow(/not base64 of JSON/);
  });
});

describe.each(RATE_LIMIT_STORES)('request bodies ($store)', ({ env }) => {
  let t: TestApp;
  let apiKey: string;
  let listingId: string;
  let bodies: Record<string, unknown>;
  const headers = (route: string, key: string) => ({
    'content-type': 'application/json',
    ...(route.includes('/api/listings') || route === 'PATCH /api/creators/me' || route.includes('/webhooks')
      ? bearer(key)
      : {}),
    ...(route.endsWith('/api/mcp') ? { accept: 'application/json, text/event-stream' } : {}),
  });
  const send = (route: string, payload: string, remoteAddress = freshIp()) => {
    const [method, url] = route.split(' ') as [string, string];
    return t.app.inject({
      method: method as 'POST',
      url,
      headers: headers(route, apiKey),
      payload,
      remoteAddress,
    });
  };

  beforeAll(async () => {
    t = await createTestApp({ env });
    apiKey = (await registerCreator(t)).apiKey;
    listingId = (await createHostedListing(t, apiKey, (await sshKeygen('ed25519')).publicKey)).id as string;
    bodies = largestBodies(listingId);
  });
  afterAll(() => t?.close());

  it('names a body limit for every operation that takes a body, and admits its largest valid body', async () => {
    const routes = (await openApiRoutes(t)).filter((route) => route.body);
    const named = routes.map((route) => route.name.replace('{id}', listingId)).sort();
    expect(named).toEqual(Object.keys(bodies).sort());
    const doc = (await t.app.inject({ url: '/api/openapi.json' })).json();
    for (const route of routes) {
      const [method, path] = route.name.split(' ') as [string, string];
      const limit = doc.paths[path][method.toLowerCase()]['x-body-limit-bytes'];
      expect(Object.values(BODY_LIMITS), route.name).toContain(limit);
      const name = route.name.replace('{id}', listingId);
      const largest = JSON.stringify(bodies[name]);
      expect(Buffer.byteLength(largest), `${name}: its largest body is over its limit`).toBeLessThanOrEqual(
        limit,
      );
      const res = await send(name, largest);
      expect(res.body, name).not.toMatch(/larger than/);

      const over = await send(name, JSON.stringify({ padding: 'x'.repeat(limit) }));
      expect(over.statusCode, name).toBe(400);
      expect(over.json(), name).toMatchObject({
        code: 'invalid_request',
        details: { issues: [{ field: 'body', reason: `larger than this route's limit of ${limit} bytes` }] },
      });
    }
  });

  it('refuses a body nested deeper than the limit before parsing it, on every route', async () => {
    const routes = [
      ...Object.keys(bodies),
      'POST /api/nothing-here',
      `POST /api/listings/${listingId}/publish`,
    ];
    const tooDeep = `${'['.repeat(JSON_MAX_DEPTH + 1)}${']'.repeat(JSON_MAX_DEPTH + 1)}`;
    const deepest = `${'['.repeat(JSON_MAX_DEPTH)}${']'.repeat(JSON_MAX_DEPTH)}`;
    for (const route of routes) {
      const res = await send(route, tooDeep);
      expect(res.statusCode, `${route}: ${res.body}`).toBe(400);
      expect(res.json().details.issues, route).toEqual([
        { field: 'body', reason: `nested deeper than ${JSON_MAX_DEPTH} levels of arrays and objects` },
      ]);
      // At the limit the body is parsed: the answer is about its shape, not its depth.
      const atLimit = await send(route, deepest);
      expect(atLimit.body, route).not.toMatch(/nested deeper/);
    }
  });

  it('refuses an X-Wallet-Signature of deeply nested JSON as malformed', async () => {
    const res = await t.app.inject({
      url: '/api/entitlements',
      headers: {
        'x-wallet-signature': Buffer.from(`${'['.repeat(4000)}${']'.repeat(4000)}`).toString('base64'),
      },
      remoteAddress: freshIp(),
    });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({
      code: 'invalid_signature',
      message: expect.stringMatching(/base64 of JSON/),
    });
  });

  it('counts a malformed, over-deep or oversized body against the sender’s budget', async () => {
    const limited = await createTestApp({ env: { ...env, RATE_LIMIT_AUTH: '3/60' } });
    try {
      const from = freshIp();
      const tooDeep = '['.repeat(10_000);
      const payloads = ['{', tooDeep, 'x'.repeat(BODY_LIMITS.signed + 1)];
      for (const payload of payloads) {
        const res = await limited.app.inject({
          method: 'POST',
          url: '/api/auth/sessions',
          headers: { 'content-type': 'application/json' },
          payload,
          remoteAddress: from,
        });
        expect(res.statusCode).toBe(400);
      }
      const next = await limited.app.inject({
        method: 'POST',
        url: '/api/auth/sessions',
        headers: { 'content-type': 'application/json' },
        payload: '{}',
        remoteAddress: from,
      });
      expect(next.statusCode).toBe(429);
      expect(next.json().code).toBe('rate_limited');
    } finally {
      await limited.close();
    }
  });
});
