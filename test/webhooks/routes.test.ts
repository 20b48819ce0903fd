import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bearer, expectError, newWallet, registerCreator } from '../identity/support.js';
import {
  buy,
  createPaymentsApp,
  fundedWallet,
  type PaymentsTestApp,
  publishListing,
  walletSignatureHeader,
} from '../purchases/support.js';
import { BACKENDS } from '../support/db.js';

// A public address written as one: subscribing resolves no name, and nothing is ever sent here.
const PUBLIC_URL = 'https://93.184.216.34/hooks';

describe.each(BACKENDS)('webhook subscription routes on %s', (backend) => {
  let t: PaymentsTestApp;
  beforeEach(async () => {
    t = await createPaymentsApp({ backend });
  });
  afterEach(() => t.close());

  const asCreator = (apiKey: string, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) =>
    t.app.inject({ method, url, headers: bearer(apiKey), payload });
  const asWallet = async (
    wallet: ReturnType<typeof newWallet>,
    method: 'GET' | 'POST' | 'DELETE',
    url: string,
    payload?: object,
  ) =>
    t.app.inject({
      method,
      url,
      headers: { 'x-wallet-signature': await walletSignatureHeader(t, wallet) },
      payload,
    });

  it('a creator subscribes, lists, reads the log of and deletes its subscriptions; another creator sees none of them', async () => {
    const alice = await registerCreator(t);
    const bob = await registerCreator(t);
    const created = await asCreator(alice.apiKey, 'POST', '/api/creators/me/webhooks', {
      url: PUBLIC_URL,
      events: ['sale', 'release.cut', 'sale'],
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.headers['cache-control']).toBe('no-store');
    const body = created.json();
    expect(body).toEqual({
      id: expect.any(String),
      url: PUBLIC_URL,
      events: ['release.cut', 'sale'],
      listing: null,
      created_at: t.clock.now().toISOString(),
      status: 'active',
      disabled_at: null,
      disabled_reason: null,
      consecutive_failures: 0,
      secret: expect.stringMatching(/^whsec_/),
    });
    // The secret is stored sealed, never as given.
    const stored = await t.ctx.database.query<{ sealed_secret: string }>(
      'select sealed_secret from webhook_subscriptions where id = $1',
      [body.id],
    );
    expect(stored.rows[0]!.sealed_secret).not.toContain(body.secret.slice(6));

    const { secret: _secret, ...listed } = body;
    expect((await asCreator(alice.apiKey, 'GET', '/api/creators/me/webhooks')).json()).toEqual({
      subscriptions: [listed],
    });
    expect((await asCreator(bob.apiKey, 'GET', '/api/creators/me/webhooks')).json()).toEqual({
      subscriptions: [],
    });
    const log = await asCreator(alice.apiKey, 'GET', `/api/creators/me/webhooks/${body.id}/deliveries`);
    expect(log.json()).toEqual({ subscription: listed, deliveries: [] });

    // Another creator's id is the same 404 as an unknown one, on every route.
    for (const [method, url] of [
      ['GET', `/api/creators/me/webhooks/${body.id}/deliveries`],
      ['DELETE', `/api/creators/me/webhooks/${body.id}`],
      ['DELETE', '/api/creators/me/webhooks/00000000-0000-4000-8000-000000000000'],
    ] as const) {
      expectError(await asCreator(bob.apiKey, method, url), 404, 'not_found');
    }
    const deleted = await asCreator(alice.apiKey, 'DELETE', `/api/creators/me/webhooks/${body.id}`);
    expect(deleted.json()).toEqual({ id: body.id, deleted: true });
    expect((await asCreator(alice.apiKey, 'GET', '/api/creators/me/webhooks')).json()).toEqual({
      subscriptions: [],
    });
    expectError(
      await asCreator(alice.apiKey, 'DELETE', `/api/creators/me/webhooks/${body.id}`),
      404,
      'not_found',
    );
  });

  it('refuses bad bodies: unknown or holder events for a creator, creator events for a holder, a bad URL, more than 20', async () => {
    const alice = await registerCreator(t);
    for (const payload of [
      { url: PUBLIC_URL, events: [] },
      { url: PUBLIC_URL, events: ['release.published'] },
      { url: PUBLIC_URL, events: ['anything'] },
      { url: 'ftp://93.184.216.34/x', events: ['sale'] },
      { url: 'not a url', events: ['sale'] },
      { url: 'https://user:pw@93.184.216.34/x', events: ['sale'] },
      { url: PUBLIC_URL, events: ['sale'], listing: 'a/b' },
    ]) {
      expectError(
        await asCreator(alice.apiKey, 'POST', '/api/creators/me/webhooks', payload),
        400,
        'invalid_request',
      );
    }
    const wallet = newWallet();
    expectError(
      await asWallet(wallet, 'POST', '/api/webhooks', { url: PUBLIC_URL, events: ['sale'] }),
      400,
      'invalid_request',
    );
    for (let i = 0; i < 20; i++) {
      expect(
        (
          await asCreator(alice.apiKey, 'POST', '/api/creators/me/webhooks', {
            url: PUBLIC_URL,
            events: ['sale'],
          })
        ).statusCode,
      ).toBe(201);
    }
    const over = await asCreator(alice.apiKey, 'POST', '/api/creators/me/webhooks', {
      url: PUBLIC_URL,
      events: ['sale'],
    });
    expectError(over, 400, 'invalid_request');
    expect(over.json().details.issues[0].reason).toContain('at most 20');
  });

  it('a holder subscribes for a listing it holds, not for one it does not hold or that does not exist; lists and deletes only its own', async () => {
    const fixture = await publishListing(t, { priceMicro: 1_000_000n });
    const other = await publishListing(t, { slug: 'other-kit' });
    const holder = await fundedWallet(t, 5_000_000n);
    expect((await buy(t, fixture, holder)).statusCode).toBe(200);
    const created = await asWallet(holder, 'POST', '/api/webhooks', {
      url: PUBLIC_URL,
      events: ['release.published', 'release.advisory', 'release.yanked'],
      listing: `${fixture.owner}/${fixture.slug}`,
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toMatchObject({ listing: `${fixture.owner}/${fixture.slug}`, status: 'active' });
    expectError(
      await asWallet(holder, 'POST', '/api/webhooks', {
        url: PUBLIC_URL,
        events: ['release.published'],
        listing: `${other.owner}/${other.slug}`,
      }),
      403,
      'not_entitled',
    );
    expectError(
      await asWallet(holder, 'POST', '/api/webhooks', {
        url: PUBLIC_URL,
        events: ['release.published'],
        listing: 'nobody/nothing',
      }),
      404,
      'not_found',
    );
    const id = created.json().id as string;
    const listed = await asWallet(holder, 'GET', '/api/webhooks');
    expect(listed.json().subscriptions.map((row: { id: string }) => row.id)).toEqual([id]);
    expect(listed.body).not.toContain(created.json().secret);
    const stranger = newWallet();
    expect((await asWallet(stranger, 'GET', '/api/webhooks')).json()).toEqual({ subscriptions: [] });
    expectError(await asWallet(stranger, 'GET', `/api/webhooks/${id}/deliveries`), 404, 'not_found');
    expectError(await asWallet(stranger, 'DELETE', `/api/webhooks/${id}`), 404, 'not_found');
    expect((await asWallet(holder, 'GET', `/api/webhooks/${id}/deliveries`)).json().deliveries).toEqual([]);
    expect((await asWallet(holder, 'DELETE', `/api/webhooks/${id}`)).json()).toEqual({ id, deleted: true });
    expect((await asWallet(holder, 'GET', '/api/webhooks')).json()).toEqual({ subscriptions: [] });
  });

  it('refuses a missing or used wallet signature with 401 invalid_signature before reading the body, with a fresh challenge', async () => {
    const wallet = newWallet();
    expectError(
      await t.app.inject({ method: 'POST', url: '/api/webhooks', payload: { nonsense: true } }),
      401,
      'invalid_signature',
    );
    const header = await walletSignatureHeader(t, wallet);
    expect(
      (await t.app.inject({ url: '/api/webhooks', headers: { 'x-wallet-signature': header } })).statusCode,
    ).toBe(200);
    const replay = await t.app.inject({
      method: 'POST',
      url: '/api/webhooks',
      headers: { 'x-wallet-signature': header },
      payload: { nonsense: true },
    });
    expectError(replay, 401, 'invalid_signature');
    expect(replay.json().details.wallet_challenge.address).toBe(wallet.address);
    expectError(await t.app.inject({ url: '/api/creators/me/webhooks' }), 401, 'invalid_key');
  });
});
