import { and, eq, isNull } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { apiKeys } from '../../src/db/schema/index.js';
import { issueApiKey, SESSION_TTL_MS } from '../../src/identity/api-keys.js';
import { creatorOf, requireApiKey } from '../../src/identity/guard.js';
import { CURRENT_SCOPES } from '../../src/identity/scopes.js';
import { errorResponses } from '../../src/platform/http/schemas.js';
import { rateLimitConfig } from '../../src/platform/limits/rate-limit.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { BACKENDS } from '../support/db.js';
import {
  bearer,
  expectError,
  newWallet,
  type RegisteredCreator,
  registerCreator,
  signedChallenge,
} from './support.js';

describe.each(BACKENDS)('API keys on %s', (backend) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  const me = (headers: Record<string, string> = {}) => t.app.inject({ url: '/api/creators/me', headers });
  const rotate = (body: object, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'POST', url: '/api/auth/rotate-key', payload: body, headers });
  const signIn = (body: object) => t.app.inject({ method: 'POST', url: '/api/auth/sessions', payload: body });
  const signOut = (apiKey: string) =>
    t.app.inject({ method: 'DELETE', url: '/api/auth/sessions/current', headers: bearer(apiKey) });

  it('register → me → rotate → the old key is refused and the new one works', async () => {
    t = await createTestApp({ backend });
    const creator = await registerCreator(t);
    const mine = await me(bearer(creator.apiKey));
    expect(mine.statusCode).toBe(200);
    expect(mine.json()).toMatchObject({
      id: creator.id,
      handle: creator.handle,
      payout_address: creator.wallet.address,
    });

    const proof = await signedChallenge(t, creator.wallet, 'rotate_key');
    const rotated = await rotate({ address: creator.wallet.address, ...proof });
    expect(rotated.statusCode, rotated.body).toBe(200);
    expect(rotated.headers['cache-control']).toBe('no-store');
    const body = rotated.json();
    expect(body).toEqual({
      api_key: expect.stringMatching(/^r402_/),
      handle: creator.handle,
      scopes: [...CURRENT_SCOPES],
      created_at: t.clock.now().toISOString(),
      revoked: { agent_keys: 1, web_sessions: 0 },
    });
    expect(body.api_key).not.toBe(creator.apiKey);

    expectError(await me(bearer(creator.apiKey)), 401, 'invalid_key');
    expect((await me(bearer(body.api_key))).statusCode).toBe(200);
  });

  describe('invalid_key', () => {
    it.each([
      ['no Authorization header', {}],
      ['another scheme', { authorization: 'Basic dXNlcjpwYXNz' }],
      ['a malformed key', { authorization: 'Bearer r402_short' }],
      ['an empty bearer', { authorization: 'Bearer ' }],
      ['an unknown key', { authorization: `Bearer r402_${'A'.repeat(43)}` }],
    ])('refuses %s with 401 invalid_key', async (_name, headers) => {
      t = await createTestApp({ backend });
      await registerCreator(t);
      expectError(await me(headers), 401, 'invalid_key');
    });

    it('accepts the scheme in any case', async () => {
      t = await createTestApp({ backend });
      const creator = await registerCreator(t);
      expect((await me({ authorization: `bearer ${creator.apiKey}` })).statusCode).toBe(200);
    });
  });

  describe('scopes', () => {
    it('refuses a key without the route scope with 403 insufficient_scope; rotating yields one with it', async () => {
      t = await createTestApp({ backend });
      const creator = await registerCreator(t);
      // A key issued when only listings:read existed.
      const older = await issueApiKey(t.ctx.database.db, {
        creatorId: creator.id,
        kind: 'agent',
        at: t.clock.now(),
        scopes: ['listings:read'],
      });
      const patch = async (apiKey: string) =>
        t.app.inject({
          method: 'PATCH',
          url: '/api/creators/me',
          headers: bearer(apiKey),
          payload: {
            abuse_contact: 'new@example.com',
            step_up: await signedChallenge(t, creator.wallet, 'step_up'),
          },
        });
      expectError(await patch(older.apiKey), 403, 'insufficient_scope');
      // Routes needing no scope still accept it.
      expect((await me(bearer(older.apiKey))).statusCode).toBe(200);

      const rotated = await rotate({
        address: creator.wallet.address,
        ...(await signedChallenge(t, creator.wallet, 'rotate_key')),
      });
      const fresh = rotated.json().api_key;
      expect(rotated.json().scopes).toContain('account:write');
      expect((await patch(fresh)).statusCode).toBe(200);
      expectError(await me(bearer(older.apiKey)), 401, 'invalid_key');
    });

    it('gives other domains a typed guard that checks any scope', async () => {
      t = await createTestApp({
        backend,
        extend: (app, ctx) => {
          app.get(
            '/test/guarded',
            {
              config: rateLimitConfig(ctx.config, 'creator'),
              onRequest: requireApiKey(ctx, 'releases:write'),
              schema: {
                response: {
                  200: z.object({ id: z.string(), handle: z.string(), kind: z.string() }),
                  ...errorResponses('invalid_key', 'insufficient_scope'),
                },
              },
            },
            async (request) => {
              const creator = creatorOf(request);
              return { id: creator.id, handle: creator.handle, kind: creator.key.kind };
            },
          );
        },
      });
      const creator = await registerCreator(t);
      const res = await t.app.inject({ url: '/test/guarded', headers: bearer(creator.apiKey) });
      expect(res.json()).toEqual({ id: creator.id, handle: creator.handle, kind: 'agent' });
      const narrow = await issueApiKey(t.ctx.database.db, {
        creatorId: creator.id,
        kind: 'agent',
        at: t.clock.now(),
        scopes: ['listings:read', 'listings:write'],
      });
      expectError(
        await t.app.inject({ url: '/test/guarded', headers: bearer(narrow.apiKey) }),
        403,
        'insufficient_scope',
      );
      expectError(await t.app.inject({ url: '/test/guarded' }), 401, 'invalid_key');
    });
  });

  describe('POST /api/auth/rotate-key', () => {
    it('needs no Authorization header and ignores one', async () => {
      t = await createTestApp({ backend });
      const creator = await registerCreator(t);
      const proof = await signedChallenge(t, creator.wallet, 'rotate_key');
      const res = await rotate(
        { address: creator.wallet.address, ...proof },
        bearer(`r402_${'B'.repeat(43)}`),
      );
      expect(res.statusCode).toBe(200);
    });

    it('revokes every agent key and every web session of the creator, and says how many', async () => {
      t = await createTestApp({ backend });
      const creator = await registerCreator(t);
      const other = await registerCreator(t);
      const signInAs = async (who: RegisteredCreator) =>
        (
          await signIn({
            address: who.wallet.address,
            ...(await signedChallenge(t, who.wallet, 'wallet_ownership')),
          })
        ).json().api_key as string;
      // An expired session is dead already: rotation neither counts nor touches it.
      const expired = await signInAs(creator);
      t.clock.advance(SESSION_TTL_MS);
      const older = await issueApiKey(t.ctx.database.db, {
        creatorId: creator.id,
        kind: 'agent',
        at: t.clock.now(),
        scopes: ['listings:read'],
      });
      const sessions = [await signInAs(creator), await signInAs(creator)];
      const othersSession = await signInAs(other);

      const res = await rotate({
        address: creator.wallet.address,
        ...(await signedChallenge(t, creator.wallet, 'rotate_key')),
      });
      expect(res.statusCode, res.body).toBe(200);
      const { api_key: fresh, revoked } = res.json();
      expect(revoked).toEqual({ agent_keys: 2, web_sessions: 2 });

      for (const key of [creator.apiKey, older.apiKey, ...sessions, expired]) {
        expectError(await me(bearer(key)), 401, 'invalid_key');
      }
      expect((await me(bearer(fresh))).statusCode).toBe(200);
      const rows = await t.ctx.database.db.select().from(apiKeys).where(eq(apiKeys.creatorId, creator.id));
      expect(rows.filter((row) => row.revokedAt === null && row.kind === 'agent')).toHaveLength(1);
      expect(rows.filter((row) => row.kind === 'session' && row.revokedAt === null)).toHaveLength(1);
      // Another creator's keys are untouched, and signing in again works after a rotation.
      expect((await me(bearer(other.apiKey))).statusCode).toBe(200);
      expect((await me(bearer(othersSession))).statusCode).toBe(200);
      expect((await me(bearer(await signInAs(creator)))).statusCode).toBe(200);
    });

    it('leaves exactly one live key when two rotations race', async () => {
      t = await createTestApp({ backend });
      const creator = await registerCreator(t);
      const proofs = await Promise.all([
        signedChallenge(t, creator.wallet, 'rotate_key'),
        signedChallenge(t, creator.wallet, 'rotate_key'),
      ]);
      const answers = await Promise.all(
        proofs.map((proof) => rotate({ address: creator.wallet.address, ...proof })),
      );
      expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200]);
      const live = await t.ctx.database.db
        .select()
        .from(apiKeys)
        .where(and(eq(apiKeys.creatorId, creator.id), isNull(apiKeys.revokedAt)));
      expect(live).toHaveLength(1);
      const working = [];
      for (const answer of answers) {
        if ((await me(bearer(answer.json().api_key))).statusCode === 200) working.push(answer);
      }
      expect(working).toHaveLength(1);
    });

    it('answers 404 for an address that is no creator’s payout address', async () => {
      t = await createTestApp({ backend });
      const stranger = newWallet();
      const proof = await signedChallenge(t, stranger, 'rotate_key');
      expectError(await rotate({ address: stranger.address, ...proof }), 404, 'not_found');
    });

    it('refuses a signature from someone else for the creator’s address', async () => {
      t = await createTestApp({ backend });
      const creator = await registerCreator(t);
      const forged = await signedChallenge(t, creator.wallet, 'rotate_key', { signer: newWallet() });
      expectError(await rotate({ address: creator.wallet.address, ...forged }), 401, 'invalid_signature');
      expect((await me(bearer(creator.apiKey))).statusCode).toBe(200);
    });

    it.each([
      ['no address', { nonce: 'a'.repeat(32), signature: '0x00' }, 'address'],
      ['a bad address', { address: 'x', nonce: 'a'.repeat(32), signature: '0x00' }, 'address'],
      [
        'no signature',
        { address: '0x0000000000000000000000000000000000000001', nonce: 'a'.repeat(32) },
        'signature',
      ],
      [
        'an unknown field',
        { address: '0x0000000000000000000000000000000000000001', nonce: 'a', signature: '0x', key: 1 },
        'key',
      ],
    ])('refuses %s with 400 invalid_request', async (_name, body, field) => {
      t = await createTestApp({ backend });
      const res = await rotate(body);
      expectError(res, 400, 'invalid_request');
      expect(res.json().details.issues.map((issue: { field: string }) => issue.field)).toContain(field);
    });

    it('is rate limited in the auth class', async () => {
      t = await createTestApp({ backend, env: { RATE_LIMIT_AUTH: '1/60' } });
      await rotate({});
      expectError(await rotate({}), 429, 'rate_limited');
    });
  });

  describe('web sessions', () => {
    it('sign in with a wallet_ownership signature from the payout address; the key lasts 12 hours', async () => {
      t = await createTestApp({ backend });
      const creator = await registerCreator(t);
      const res = await signIn({
        address: creator.wallet.address,
        ...(await signedChallenge(t, creator.wallet, 'wallet_ownership')),
      });
      expect(res.statusCode, res.body).toBe(201);
      const session = res.json();
      expect(session).toEqual({
        api_key: expect.stringMatching(/^r402_/),
        handle: creator.handle,
        scopes: [...CURRENT_SCOPES],
        expires_at: new Date(t.clock.now().getTime() + SESSION_TTL_MS).toISOString(),
      });
      t.clock.advance(SESSION_TTL_MS - 1);
      expect((await me(bearer(session.api_key))).statusCode).toBe(200);
      t.clock.advance(1);
      expectError(await me(bearer(session.api_key)), 401, 'invalid_key');
      // The agent key does not expire.
      expect((await me(bearer(creator.apiKey))).statusCode).toBe(200);
    });

    it('sign out revokes the session key only', async () => {
      t = await createTestApp({ backend });
      const creator = await registerCreator(t);
      const signInWith = async () =>
        (
          await signIn({
            address: creator.wallet.address,
            ...(await signedChallenge(t, creator.wallet, 'wallet_ownership')),
          })
        ).json().api_key as string;
      const first = await signInWith();
      const second = await signInWith();
      const res = await signOut(first);
      expect(res.statusCode).toBe(204);
      expect(res.body).toBe('');
      expectError(await me(bearer(first)), 401, 'invalid_key');
      expectError(await signOut(first), 401, 'invalid_key');
      expect((await me(bearer(second))).statusCode).toBe(200);
      expect((await me(bearer(creator.apiKey))).statusCode).toBe(200);
    });

    it('sign out refuses an agent key', async () => {
      t = await createTestApp({ backend });
      const creator = await registerCreator(t);
      expectError(await signOut(creator.apiKey), 400, 'invalid_request');
      expect((await me(bearer(creator.apiKey))).statusCode).toBe(200);
    });

    it('sign in refuses other purposes, other signers and non-creators', async () => {
      t = await createTestApp({ backend });
      const creator = await registerCreator(t);
      const address = creator.wallet.address;
      expectError(
        await signIn({ address, ...(await signedChallenge(t, creator.wallet, 'rotate_key')) }),
        401,
        'invalid_signature',
      );
      expectError(
        await signIn({
          address,
          ...(await signedChallenge(t, creator.wallet, 'wallet_ownership', { signer: newWallet() })),
        }),
        401,
        'invalid_signature',
      );
      const stranger = newWallet();
      expectError(
        await signIn({
          address: stranger.address,
          ...(await signedChallenge(t, stranger, 'wallet_ownership')),
        }),
        404,
        'not_found',
      );
    });
  });
});
