import type { PrivateKeyAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey, SESSION_TTL_MS } from '../../src/identity/api-keys.js';
import { CHALLENGE_TTL_MS } from '../../src/identity/challenges.js';
import { CURRENT_SCOPES } from '../../src/identity/scopes.js';
import { encodeWalletSignature } from '../../src/identity/wallet-signature.js';
import { sealSecret } from '../../src/webhooks/secrets.js';
import { insertSubscription } from '../../src/webhooks/store.js';
import {
  bearer,
  getChallenge,
  newWallet,
  type RegisteredCreator,
  registerCreator,
  signedChallenge,
  walletSignatureHeader,
} from '../identity/support.js';
import {
  buyUrl,
  createPaymentsApp,
  fundedWallet,
  type PaymentsTestApp,
  publishListing,
  quote,
  signAuthorization,
} from '../purchases/support.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { BACKENDS } from '../support/db.js';
import { type PublishedFixture, publishedListingFixture } from '../support/listings.js';
import {
  acceptsScheme,
  databaseSnapshot,
  expectSpecError,
  fillPath,
  type OpenApiRoute,
  openApiRoutes,
} from '../support/openapi-routes.js';

/**
 * Issue 19, item 5: the authorization matrix, driven by the served OpenAPI document. Every key
 * route is called by every wrong caller (no key, malformed keys, the owner's rotated key, the
 * owner's expired and signed-out session keys, the owner's key without the route's scope, another
 * creator's full key on the owner's resource) and every wallet route with every wrong signature
 * (another wallet's, a used challenge, an expired one), and the buy route's EIP-712 payment
 * authorizations with the same three wrongs. Each must get the spec's error, learn
 * nothing of the owner's data and change nothing in the database. Every operation of the document
 * must have a row in MATRIX below, so a new route cannot be added without deciding how it is guarded.
 */

/** A real public key (made by ssh-keygen), so the bodies below are ones the routes accept. */
const ED25519_KEY =
  'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHUYxAvG+rrB5uEgvPt0vXR1eK9UZIiI9RAUg2xj0C2F matrix@test';

/** A well-formed request of a key route, aimed at the owner's listing when the path names one. */
interface KeyRow {
  kind: 'key';
  /** The route's body and query when called for real; the refusals below must not depend on them being wrong. */
  payload?: Record<string, unknown>;
  query?: (listingId: string) => Record<string, string>;
  /**
   * How another creator's resource id is tried: `path` puts the owner's listing id in `{id}`,
   * `query` in the route's query; otherwise the reason the route has no other creator's id to try
   * (it only ever reads or changes the caller's own account), and the test checks the answer
   * carries none of the owner's data instead.
   */
  foreignId: 'path' | 'query' | { none: string };
}

/** A route whose security lists `walletSignature`; `params` are its path values for the owner's listing. */
interface WalletRow {
  kind: 'wallet';
  /** The route also takes a `PAYMENT-SIGNATURE` (an EIP-712 USDC authorization): tried below with the same wrongs. */
  payment?: true;
  /** What a good signature gets on the owner's published listing, so the refusals are refusals of the signature alone. */
  goodStatus: number;
  /** The body sent with every call (routes that take one). */
  payload?: Record<string, unknown>;
}

/** A route with no credential in a header: why the matrix has nothing to try on it. */
interface OpenRow {
  kind: 'open';
  reason: string;
}

type MatrixRow = KeyRow | WalletRow | OpenRow;

const PUBLIC =
  'public and free: no credential, nothing private to reach (listing pages serve only published data)';

const MATRIX: Record<string, MatrixRow> = {
  'GET /api/health': { kind: 'open', reason: PUBLIC },
  'GET /api/ready': {
    kind: 'open',
    reason: `${PUBLIC}: which of this process's dependencies answer, no one's data`,
  },
  'GET /api/terms': { kind: 'open', reason: PUBLIC },
  'GET /.well-known/api-catalog': { kind: 'open', reason: PUBLIC },
  'GET /.well-known/agent-skills/buy-a-repo/SKILL.md': { kind: 'open', reason: PUBLIC },
  'GET /.well-known/agent-skills/index.json': { kind: 'open', reason: PUBLIC },
  'GET /.well-known/x402': { kind: 'open', reason: PUBLIC },
  'GET /api/openapi.json': { kind: 'open', reason: PUBLIC },
  'GET /api/label/{owner}/{slug}': { kind: 'open', reason: PUBLIC },
  'GET /{owner}/{slug}': { kind: 'open', reason: PUBLIC },
  'GET /{owner}/{slug}/releases.atom': { kind: 'open', reason: PUBLIC },
  'GET /api/snippet/{owner}/{slug}': { kind: 'open', reason: PUBLIC },
  'GET /api/v/{owner}/{slug}/releases': { kind: 'open', reason: PUBLIC },
  'GET /api/v/{owner}/{slug}/releases/{version}/attestation': {
    kind: 'open',
    reason: `${PUBLIC}; the attestation is signed, public proof of a release's contents`,
  },
  'GET /.well-known/repo402-keys.json': { kind: 'open', reason: PUBLIC },
  'GET /api/devnet': { kind: 'open', reason: `${PUBLIC}; devnet mode only` },
  'GET /api/devnet/balance/{address}': { kind: 'open', reason: `${PUBLIC}; devnet mode only` },
  'GET /api/devnet/tx/{hash}': { kind: 'open', reason: `${PUBLIC}; devnet mode only` },
  'POST /api/devnet/faucet': {
    kind: 'open',
    reason:
      'devnet mode only: test money for any address, capped per address and per day (test/devnet/faucet.test.ts)',
  },
  'GET /api/download/{token}': {
    kind: 'open',
    reason: 'the HMAC-signed, 5-minute token in the path is the credential (test/purchases/buy.test.ts)',
  },
  'POST /api/mcp': {
    kind: 'open',
    reason:
      'MCP tools carry their wallet and payment signatures inside JSON-RPC; they call the same services as the wallet routes below',
  },
  'GET /api/mcp': { kind: 'open', reason: 'a quiet notification stream: nothing private in it' },
  'DELETE /api/mcp': { kind: 'open', reason: 'stateless: ends nothing the server keeps' },
  'GET /api/auth/challenge': {
    kind: 'open',
    reason: 'mints a challenge for any address: the signature over it is the credential',
  },
  'POST /api/auth/rotate-key': {
    kind: 'open',
    reason: 'the rotate_key signature in the body is the credential (test/identity/api-keys.test.ts)',
  },
  'POST /api/auth/sessions': {
    kind: 'open',
    reason: 'the wallet_ownership signature in the body is the credential (test/identity/api-keys.test.ts)',
  },
  'POST /api/auth/wallet-sessions': {
    kind: 'open',
    reason:
      'the wallet_ownership signature in the body is the credential; the session it answers is a wallet credential (test/identity/wallet-session.test.ts)',
  },
  'POST /api/reports': {
    kind: 'open',
    reason:
      'anyone may report a listing on show, without an account; it reaches nothing private and is rate-limited per address (test/moderation/reports.test.ts)',
  },
  'POST /api/creators': {
    kind: 'open',
    reason:
      'registration: the address_proof signature and the invite in the body are the credentials (test/identity/registration.test.ts)',
  },
  'POST /api/github/webhooks': {
    kind: 'open',
    reason: 'internal: the x-hub-signature-256 HMAC is the credential (test/releases/github-rail.test.ts)',
  },

  'DELETE /api/auth/sessions/current': {
    kind: 'key',
    foreignId: { none: 'signs out the session key the request carries, and no other' },
  },
  'GET /api/creators/me': { kind: 'key', foreignId: { none: 'reads the caller’s own account' } },
  'PATCH /api/creators/me': {
    kind: 'key',
    payload: {
      abuse_contact: 'hijack@example.com',
      step_up: { nonce: '0'.repeat(32), signature: `0x${'1'.repeat(130)}` },
    },
    foreignId: { none: 'changes the caller’s own account' },
  },
  'POST /api/listings': {
    kind: 'key',
    payload: { source: 'hosted', slug: 'matrix-stolen', ssh_public_key: ED25519_KEY },
    foreignId: { none: 'creates a listing in the caller’s own account' },
  },
  'GET /api/listings': { kind: 'key', foreignId: { none: 'lists the caller’s own listings' } },
  'GET /api/listings/{id}': { kind: 'key', foreignId: 'path' },
  'PATCH /api/listings/{id}': {
    kind: 'key',
    payload: { description: 'hijacked', price_micro: '1' },
    foreignId: 'path',
  },
  'DELETE /api/listings/{id}': { kind: 'key', foreignId: 'path' },
  'PUT /api/listings/{id}/ssh-key': {
    kind: 'key',
    payload: { ssh_public_key: ED25519_KEY },
    foreignId: 'path',
  },
  'POST /api/listings/{id}/publish': { kind: 'key', foreignId: 'path' },
  'POST /api/listings/{id}/licence': { kind: 'key', payload: { spdx: 'MIT' }, foreignId: 'path' },
  'POST /api/listings/{id}/sync': { kind: 'key', payload: {}, foreignId: 'path' },
  'GET /api/listings/{id}/releases': { kind: 'key', foreignId: 'path' },
  'GET /api/listings/{id}/manifest': { kind: 'key', foreignId: 'path' },
  'GET /api/listings/{id}/holders': { kind: 'key', foreignId: 'path' },
  'GET /api/github/repositories': {
    kind: 'key',
    foreignId: {
      none: 'lists only repositories whose .repo402 names the caller (test/listings/github-repositories.test.ts)',
    },
  },
  'GET /api/creators/me/sales': {
    kind: 'key',
    query: (listingId) => ({ listing_id: listingId }),
    foreignId: 'query',
  },
  'GET /api/creators/me/sales/daily': { kind: 'key', foreignId: { none: 'the caller’s own daily sales' } },
  'GET /api/creators/me/ledger': { kind: 'key', foreignId: { none: 'the caller’s own ledger' } },
  'GET /api/creators/me/notices': { kind: 'key', foreignId: { none: 'the caller’s own notices' } },
  'GET /api/creators/me/payouts': { kind: 'key', foreignId: { none: 'the caller’s own payouts' } },

  'GET /api/r/{owner}/{slug}': { kind: 'wallet', goodStatus: 402, payment: true },
  'GET /api/r/{owner}/{slug}/v/{version}': { kind: 'wallet', goodStatus: 403 },
  'GET /api/v/{owner}/{slug}': { kind: 'wallet', goodStatus: 200 },
  'GET /api/entitlements': { kind: 'wallet', goodStatus: 200 },
  // A fresh wallet holds nothing: subscribing to the owner's listing is refused after the signature.
  'POST /api/webhooks': {
    kind: 'wallet',
    goodStatus: 400,
    payload: { url: 'http://127.0.0.1:9/hooks', events: ['release.published'] },
  },
  'GET /api/webhooks': { kind: 'wallet', goodStatus: 200 },
  // `{id}` is the owner's listing id: no subscription of the caller's.
  'DELETE /api/webhooks/{id}': { kind: 'wallet', goodStatus: 404 },
  'GET /api/webhooks/{id}/deliveries': { kind: 'wallet', goodStatus: 404 },
  'POST /api/creators/me/webhooks': {
    kind: 'key',
    // A public address written as one: no name is resolved in a test.
    payload: { url: 'https://93.184.216.34/receive', events: ['sale'] },
    foreignId: { none: 'subscribes the caller’s own account' },
  },
  'GET /api/creators/me/webhooks': {
    kind: 'key',
    foreignId: { none: 'lists the caller’s own subscriptions' },
  },
  'DELETE /api/creators/me/webhooks/{id}': { kind: 'key', foreignId: 'path' },
  'GET /api/creators/me/webhooks/{id}/deliveries': { kind: 'key', foreignId: 'path' },
};

describe.each(BACKENDS)('the authorization matrix on %s', (backend) => {
  let t: TestApp;
  let routes: OpenApiRoute[];
  /** The owner of the listing every wrong caller aims at. */
  let owner: RegisteredCreator;
  let listing: PublishedFixture;
  /** Another creator with a full key. */
  let other: RegisteredCreator;
  let rotatedKey: string;
  let currentKey: string;
  let expiredSession: string;
  let signedOutSession: string;

  beforeAll(async () => {
    t = await createTestApp({ backend, env: { LOG_LEVEL: process.env.MATRIX_LOG ?? 'silent' } });
    routes = await openApiRoutes(t);
    owner = await registerCreator(t);
    other = await registerCreator(t);
    listing = await publishedListingFixture(t, { creator: owner, slug: 'matrix-kit' });
    await publishedListingFixture(t, { creator: other, slug: 'other-kit' });
    // The owner's webhook subscription, under the listing's id, so `{id}` names the owner's own
    // subscription on the webhook routes as it names its listing elsewhere.
    await insertSubscription(t.ctx.database.db, {
      id: listing.listingId,
      kind: 'creator',
      creatorId: owner.id,
      url: 'https://93.184.216.34/hooks',
      events: ['sale'],
      sealedSecret: sealSecret(t.ctx.appSecret, listing.listingId, 'whsec_AAAA'),
      createdAt: t.clock.now(),
    });

    // The owner rotates: the key registration gave is revoked.
    rotatedKey = owner.apiKey;
    const rotation = await t.app.inject({
      method: 'POST',
      url: '/api/auth/rotate-key',
      payload: { address: owner.wallet.address, ...(await signedChallenge(t, owner.wallet, 'rotate_key')) },
    });
    expect(rotation.statusCode, rotation.body).toBe(200);
    currentKey = rotation.json().api_key;

    // A web session signed in more than 12 hours ago, and one signed out.
    const longAgo = new Date(t.clock.now().getTime() - SESSION_TTL_MS - 1000);
    expiredSession = (
      await issueApiKey(t.ctx.database.db, { creatorId: owner.id, kind: 'session', at: longAgo })
    ).apiKey;
    const signIn = await t.app.inject({
      method: 'POST',
      url: '/api/auth/sessions',
      payload: {
        address: owner.wallet.address,
        ...(await signedChallenge(t, owner.wallet, 'wallet_ownership')),
      },
    });
    expect(signIn.statusCode, signIn.body).toBe(201);
    signedOutSession = signIn.json().api_key;
    const signOut = await t.app.inject({
      method: 'DELETE',
      url: '/api/auth/sessions/current',
      headers: bearer(signedOutSession),
    });
    expect(signOut.statusCode, signOut.body).toBe(204);
  });
  afterAll(async () => t?.close());

  /** Nothing of the owner's that another caller should not see: its listing id, handle and wallet. */
  /**
   * Nothing of the owner a caller may not know: its listing id, handle and wallet, but what the
   * caller sent itself (the wallet routes are addressed by `<owner>/<slug>`, and a header may name
   * the owner's address).
   */
  const expectNoOwnerData = (body: string, context: string, { sent = [] as string[] } = {}) => {
    const said = sent.map((value) => value.toLowerCase());
    const secrets = [listing.listingId, owner.handle, owner.wallet.address].filter(
      (secret) => !said.includes(secret.toLowerCase()),
    );
    for (const secret of secrets) {
      expect(body.toLowerCase(), `${context} leaks ${secret}`).not.toContain(secret.toLowerCase());
    }
  };

  const keyRoutes = () => routes.filter((route) => MATRIX[route.name]!.kind === 'key');

  /** The route's real request: the owner's listing in the path and query, its own body. */
  const request = (route: OpenApiRoute, headers: Record<string, string>) => {
    const row = MATRIX[route.name] as KeyRow;
    const query = row.query ? `?${new URLSearchParams(row.query(listing.listingId))}` : '';
    return {
      method: route.method as 'GET',
      url: `${fillPath(route.path, { id: listing.listingId })}${query}`,
      headers,
      ...(row.payload ? { payload: row.payload } : {}),
    };
  };

  it('places every operation of the OpenAPI document in the matrix, and nothing else', () => {
    const names = routes.map((route) => route.name);
    expect(
      names.filter((name) => !(name in MATRIX)),
      'routes missing from MATRIX',
    ).toEqual([]);
    expect(
      Object.keys(MATRIX).filter((name) => !names.includes(name)),
      'MATRIX rows with no route',
    ).toEqual([]);
    for (const route of routes) {
      const row = MATRIX[route.name]!;
      // The row's kind must be the one the document declares, so a route cannot hide behind `open`.
      const declared = acceptsScheme(route, 'apiKey')
        ? 'key'
        : acceptsScheme(route, 'walletSignature')
          ? 'wallet'
          : 'open';
      expect(row.kind, route.name).toBe(declared);
      expect(row.kind === 'wallet' && row.payment === true, `${route.name} takes PAYMENT-SIGNATURE`).toBe(
        acceptsScheme(route, 'paymentSignature'),
      );
    }
    // Every `creator` route is guarded by a key, but registration, which has none to give yet.
    const creatorRoutes = routes.filter((route) => route.tags.includes('creator'));
    expect(
      creatorRoutes.filter((route) => MATRIX[route.name]!.kind !== 'key').map((route) => route.name),
    ).toEqual(['POST /api/creators']);
  });

  describe('key routes', () => {
    /** Runs the callers against each key route; each refusal is the spec's error, leaks nothing and changes nothing. */
    async function expectRefused(
      callers: { name: string; headers: (route: OpenApiRoute) => Record<string, string> | undefined }[],
      status: number,
      code: string,
    ) {
      let tried = 0;
      for (const route of keyRoutes()) {
        const before = await databaseSnapshot(t);
        for (const caller of callers) {
          const headers = caller.headers(route);
          if (!headers) continue;
          const context = `${route.name} with ${caller.name}`;
          const res = await t.app.inject(request(route, headers));
          const body = expectSpecError(res, t.config.baseUrl, context);
          expect
            .soft({ status: res.statusCode, code: body.code }, `${context}: ${res.body}`)
            .toEqual({ status, code });
          expectNoOwnerData(res.body, context);
          tried += 1;
        }
        expect(await databaseSnapshot(t), `${route.name}: the database changed`).toBe(before);
      }
      expect(tried).toBeGreaterThan(0);
    }

    it('finds the key routes of the document', () => {
      expect(keyRoutes().length).toBeGreaterThanOrEqual(18);
    });

    it('answers 401 invalid_key to no key, malformed keys, a rotated key and expired or signed-out sessions', async () => {
      const headers = (value: string | undefined) => (): Record<string, string> =>
        value === undefined ? {} : { authorization: value };
      await expectRefused(
        [
          { name: 'no key', headers: headers(undefined) },
          { name: 'an empty bearer', headers: headers('Bearer ') },
          { name: 'a key of the wrong shape', headers: headers('Bearer not-a-key') },
          { name: 'another scheme', headers: headers(`Basic ${Buffer.from('a:b').toString('base64')}`) },
          { name: 'a key cut short', headers: headers(`Bearer ${currentKey.slice(0, -1)}`) },
          { name: 'an unknown key of the right shape', headers: headers(`Bearer r402_${'A'.repeat(43)}`) },
          { name: 'the owner’s key revoked by rotation', headers: () => bearer(rotatedKey) },
          { name: 'the owner’s session signed in 12 hours ago', headers: () => bearer(expiredSession) },
          { name: 'the owner’s signed-out session', headers: () => bearer(signedOutSession) },
        ],
        401,
        'invalid_key',
      );
    });

    it('answers 403 insufficient_scope to the owner’s key without the route’s scope', async () => {
      const narrowKeys = new Map<string, string>();
      for (const scope of CURRENT_SCOPES) {
        const key = await issueApiKey(t.ctx.database.db, {
          creatorId: owner.id,
          kind: 'agent',
          at: t.clock.now(),
          scopes: CURRENT_SCOPES.filter((candidate) => candidate !== scope),
        });
        narrowKeys.set(scope, key.apiKey);
      }
      const unscoped = keyRoutes()
        .filter((route) => route.security[0]!.apiKey!.length === 0)
        .map((route) => route.name);
      // These need a valid key and no scope: any key of the creator may read its own account or sign its own session out.
      expect(unscoped).toEqual(['DELETE /api/auth/sessions/current', 'GET /api/creators/me']);
      await expectRefused(
        [
          {
            name: 'a key without the route’s scope',
            headers: (route) => {
              const scope = route.security[0]!.apiKey![0];
              return scope === undefined ? undefined : bearer(narrowKeys.get(scope)!);
            },
          },
        ],
        403,
        'insufficient_scope',
      );
    });

    it('answers 404 not_found to another creator’s full key on the owner’s listing id', async () => {
      const foreign = keyRoutes().filter(
        (route) => typeof (MATRIX[route.name] as KeyRow).foreignId === 'string',
      );
      expect(foreign.length).toBeGreaterThanOrEqual(10);
      await expectRefused(
        [
          {
            name: 'another creator’s key',
            headers: (route) =>
              typeof (MATRIX[route.name] as KeyRow).foreignId === 'string' ? bearer(other.apiKey) : undefined,
          },
        ],
        404,
        'not_found',
      );
    });

    it('shows another creator none of the owner’s data on the routes that take no resource id', async () => {
      const own = keyRoutes().filter(
        (route) => typeof (MATRIX[route.name] as KeyRow).foreignId !== 'string' && route.method === 'GET',
      );
      expect(own.map((route) => route.name)).toContain('GET /api/listings');
      for (const route of own) {
        const res = await t.app.inject(request(route, bearer(other.apiKey)));
        expect(res.statusCode, `${route.name}: ${res.body}`).toBe(200);
        expectNoOwnerData(res.body, route.name);
      }
      // The owner's own key does see its listing: the check above would catch a leak.
      const mine = await t.app.inject({ url: '/api/listings', headers: bearer(currentKey) });
      expect(mine.body).toContain(listing.listingId);
    });
  });

  describe('wallet routes', () => {
    const walletRoutes = () => routes.filter((route) => MATRIX[route.name]!.kind === 'wallet');
    const url = (route: OpenApiRoute) =>
      fillPath(route.path, {
        owner: listing.owner,
        slug: listing.slug,
        version: '1.0.0',
        id: listing.listingId,
      });
    const call = (route: OpenApiRoute, header: string) =>
      t.app.inject({
        method: route.method as 'GET',
        url: url(route),
        headers: { 'x-wallet-signature': header },
        payload: (MATRIX[route.name] as WalletRow).payload,
      });

    /**
     * One wrong signature per route: 401 invalid_signature, no owner data, no change but one new,
     * unused challenge for the wallet the header names, handed out in the refusal's details.
     */
    async function expectRefused(name: string, header: (route: OpenApiRoute) => Promise<string>) {
      const found = walletRoutes();
      expect(found.length).toBe(8);
      const challenges = () =>
        t.database.query<{ nonce: string; address: string; purpose: string; used_at: unknown }>(
          'select nonce, address, purpose, used_at from challenges',
        );
      for (const route of found) {
        const value = await header(route);
        const before = await databaseSnapshot(t, { without: ['challenges'] });
        const nonces = new Set((await challenges()).rows.map((row) => row.nonce));
        const res = await call(route, value);
        const context = `${route.name} with ${name}`;
        const body = expectSpecError(res, t.config.baseUrl, context);
        expect({ status: res.statusCode, code: body.code }, `${context}: ${res.body}`).toEqual({
          status: 401,
          code: 'invalid_signature',
        });
        const named = JSON.parse(Buffer.from(value, 'base64').toString('utf8')).address as string;
        expectNoOwnerData(res.body, context, { sent: [listing.owner, named] });
        expect(
          await databaseSnapshot(t, { without: ['challenges'] }),
          `${context}: the database changed`,
        ).toBe(before);
        const fresh = (await challenges()).rows.filter((row) => !nonces.has(row.nonce));
        expect(fresh, context).toEqual([
          { nonce: expect.any(String), address: named, purpose: 'wallet_ownership', used_at: null },
        ]);
        const offered = (res.json() as { details: { wallet_challenge: { nonce: string; address: string } } })
          .details.wallet_challenge;
        expect(offered, context).toMatchObject({ nonce: fresh[0]!.nonce, address: named });
      }
    }

    it('accepts a good signature on each (so the refusals below are the signature’s alone)', async () => {
      for (const route of walletRoutes()) {
        const res = await call(route, await walletSignatureHeader(t, newWallet()));
        expect(res.statusCode, `${route.name}: ${res.body}`).toBe(
          (MATRIX[route.name] as WalletRow).goodStatus,
        );
      }
    });

    it('refuses a challenge signed by another wallet than the one it names', async () => {
      const forge = async (
        claimed: PrivateKeyAccount,
        signer: PrivateKeyAccount,
        minted: PrivateKeyAccount,
      ) => {
        const challenge = await getChallenge(t, minted.address, 'wallet_ownership');
        const signature = await signer.signMessage({ message: challenge.message });
        return encodeWalletSignature({ address: claimed.address, nonce: challenge.nonce, signature });
      };
      const victim = newWallet();
      const thief = newWallet();
      await expectRefused('the victim’s challenge signed by the thief', () => forge(victim, thief, victim));
      await expectRefused('the victim’s challenge signed by the thief, naming the thief', () =>
        forge(thief, thief, victim),
      );
      await expectRefused('the owner’s payout address claimed by another wallet', () =>
        forge(owner.wallet, thief, owner.wallet),
      );
    });

    it('refuses a challenge already used', async () => {
      await expectRefused('a used challenge', async (route) => {
        const header = await walletSignatureHeader(t, newWallet());
        const first = await call(route, header);
        expect(first.statusCode, first.body).toBe((MATRIX[route.name] as WalletRow).goodStatus);
        return header;
      });
    });

    it('refuses a challenge signed in time but sent after it expired', async () => {
      await expectRefused('an expired challenge', async () => {
        const header = await walletSignatureHeader(t, newWallet());
        t.clock.advance(CHALLENGE_TTL_MS + 1000);
        return header;
      });
    });
  });

  describe('payment signatures', () => {
    let p: PaymentsTestApp;
    let onSale: PublishedFixture;
    beforeAll(async () => {
      // The chain and the x402 client use the real time: a payments app of its own, its clock at now.
      p = await createPaymentsApp({ backend });
      onSale = await publishListing(p, { priceMicro: 2_000_000n });
    });
    afterAll(async () => p?.close());

    const pay = (header: string, quoteId: string) =>
      p.app.inject({ url: buyUrl(onSale), headers: { 'payment-signature': header, 'x-quote-id': quoteId } });

    it('refuses an authorization signed by another wallet, an expired one and a used one, changing nothing', async () => {
      const paying = routes
        .filter((route) => (MATRIX[route.name] as WalletRow).payment)
        .map((route) => route.name);
      expect(paying).toEqual(['GET /api/r/{owner}/{slug}']);
      const offer = await quote(p, onSale);
      const payer = await fundedWallet(p, 5_000_000n);
      const past = BigInt(Math.floor(Date.now() / 1000) - 5);
      const refuse = async (name: string, header: string, status: number, code: string) => {
        const before = await databaseSnapshot(p);
        const res = await pay(header, offer.extra.quote_id);
        const body = expectSpecError(res, p.config.baseUrl, name);
        expect({ status: res.statusCode, code: body.code }, `${name}: ${res.body}`).toEqual({ status, code });
        expect(res.body, name).not.toContain('download_url');
        expect(await databaseSnapshot(p), `${name}: the database changed`).toBe(before);
      };
      // Before the payer holds the version: once it does, any authorization it signed proves a holder
      // (DESIGN.md item 6) and is answered with its own version, without a payment.
      await refuse(
        'signed by another wallet',
        await signAuthorization(offer, payer, {}, newWallet()),
        401,
        'invalid_signature',
      );
      await refuse(
        'expired',
        await signAuthorization(offer, payer, { validBefore: past }),
        402,
        'expired_authorization',
      );
      const used = await signAuthorization(offer, payer);
      const first = await pay(used, offer.extra.quote_id);
      expect(first.statusCode, first.body).toBe(200);
      await refuse('already used', used, 409, 'replay');
      // Charged once, for the one good payment.
      expect(await p.rail.devnet!.balanceOf(payer.address)).toBe(3_000_000n);
    });
  });

  // Last: it changes the owner's listing (retires it), which every test above relies on.
  it('lets the owner’s current key through on every key route (so each refusal above is the caller’s alone)', async () => {
    for (const route of keyRoutes()) {
      const res = await t.app.inject(request(route, bearer(currentKey)));
      expect.soft(res.statusCode, `${route.name}: ${res.body}`).toBeLessThan(500);
      const code = res.statusCode >= 400 ? res.json().code : undefined;
      // What is left is the route's own answer: a session-only route to an agent key, a step-up, a state.
      expect
        .soft(['invalid_key', 'insufficient_scope', 'not_found'], `${route.name}: ${res.body}`)
        .not.toContain(code);
    }
  });
});
