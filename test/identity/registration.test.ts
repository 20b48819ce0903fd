import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { apiKeys, creators, idempotencyRecords, invites } from '../../src/db/schema/index.js';
import { CHALLENGE_TTL_MS } from '../../src/identity/challenges.js';
import { IDEMPOTENCY_WINDOW_MS } from '../../src/identity/idempotency.js';
import { CURRENT_SCOPES } from '../../src/identity/scopes.js';
import { sha256Hex } from '../../src/platform/tokens.js';
import { createTestApp, RATE_LIMIT_STORES, TEST_BASE_URL, type TestApp } from '../support/app.js';
import { BACKENDS } from '../support/db.js';
import {
  bearer,
  expectError,
  freshIp,
  newInvite,
  newWallet,
  postCreator,
  registrationBody,
  signedChallenge,
  uniqueHandle,
} from './support.js';

describe.each(BACKENDS)('POST /api/creators on %s', (backend) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  describe('happy path', () => {
    it('registers and returns the creator with an agent key shown once', async () => {
      t = await createTestApp({ backend });
      const wallet = newWallet();
      const body = await registrationBody(t, wallet, { payout_address: wallet.address.toLowerCase() });
      const res = await postCreator(t, body);
      expect(res.statusCode, res.body).toBe(201);
      expect(res.headers['cache-control']).toBe('no-store');
      const created = res.json();
      expect(created).toEqual({
        id: expect.any(String),
        handle: body.handle,
        payout_address: wallet.address,
        abuse_contact: 'abuse@example.com',
        accepted_terms_version: body.accepted_terms_version,
        created_at: t.clock.now().toISOString(),
        pending_changes: [],
        api_key: expect.stringMatching(/^r402_[A-Za-z0-9_-]{43}$/),
        scopes: [...CURRENT_SCOPES],
      });
      // Only the hash of the key is stored.
      const [key] = await t.ctx.database.db.select().from(apiKeys);
      expect(key!.keyHash).toBe(sha256Hex(created.api_key));
      expect(JSON.stringify(await t.ctx.database.db.select().from(apiKeys))).not.toContain(created.api_key);
      // The key works.
      const me = await t.app.inject({ url: '/api/creators/me', headers: bearer(created.api_key) });
      expect(me.statusCode).toBe(200);
      expect(me.json()).toEqual({ ...created, api_key: undefined, scopes: undefined });
    });

    it('uses the invite up', async () => {
      t = await createTestApp({ backend });
      const body = await registrationBody(t);
      expect((await postCreator(t, body)).statusCode).toBe(201);
      const [invite] = await t.ctx.database.db.select().from(invites);
      expect(invite!.usedAt).not.toBeNull();
      // The same invite does not register anyone else.
      const wallet = newWallet();
      const second = await registrationBody(t, wallet, { invite_code: body.invite_code });
      expectError(await postCreator(t, second), 403, 'invite_required');
    });
  });

  describe('errors', () => {
    it('refuses a stale terms version with 409 terms_version_stale', async () => {
      t = await createTestApp({ backend });
      const res = await postCreator(
        t,
        await registrationBody(t, newWallet(), { accepted_terms_version: '2020-01-01' }),
      );
      expectError(res, 409, 'terms_version_stale');
    });

    it('refuses a missing invite code with 403 invite_required', async () => {
      t = await createTestApp({ backend });
      const body = await registrationBody(t);
      delete body.invite_code;
      expectError(await postCreator(t, body), 403, 'invite_required');
    });

    it('refuses an unknown invite code with 403 invite_required', async () => {
      t = await createTestApp({ backend });
      const res = await postCreator(
        t,
        await registrationBody(t, newWallet(), { invite_code: 'r402inv_nope' }),
      );
      expectError(res, 403, 'invite_required');
    });

    it('refuses a missing address_proof with 400 payout_address_unverified', async () => {
      t = await createTestApp({ backend });
      const body = await registrationBody(t);
      delete body.address_proof;
      expectError(await postCreator(t, body), 400, 'payout_address_unverified');
    });

    it.each([
      ['signed by another wallet', 'forged'],
      ['issued to another address', 'other-address'],
      ['of another purpose', 'wrong-purpose'],
      ['expired', 'expired'],
      ['unknown', 'unknown'],
    ])('refuses an address_proof %s with 400 payout_address_unverified', async (_name, kind) => {
      t = await createTestApp({ backend });
      const wallet = newWallet();
      const other = newWallet();
      const proof =
        kind === 'forged'
          ? await signedChallenge(t, wallet, 'address_proof', { signer: other })
          : kind === 'other-address'
            ? await signedChallenge(t, other, 'address_proof')
            : kind === 'wrong-purpose'
              ? await signedChallenge(t, wallet, 'wallet_ownership')
              : kind === 'unknown'
                ? { nonce: 'a'.repeat(32), signature: '0x00' }
                : await signedChallenge(t, wallet, 'address_proof');
      if (kind === 'expired') t.clock.advance(CHALLENGE_TTL_MS);
      const res = await postCreator(t, await registrationBody(t, wallet, { address_proof: proof }));
      expectError(res, 400, 'payout_address_unverified');
    });

    it('refuses a used address_proof', async () => {
      t = await createTestApp({ backend });
      const wallet = newWallet();
      const body = await registrationBody(t, wallet);
      expect((await postCreator(t, body)).statusCode).toBe(201);
      const again = await postCreator(t, {
        ...body,
        handle: uniqueHandle(),
        invite_code: await newInvite(t),
      });
      expectError(again, 400, 'payout_address_unverified');
    });

    it.each([
      ['too short', 'ab', 'at least 3'],
      ['too long', 'a'.repeat(40), 'at most 39'],
      ['upper case', 'Alice', 'lower-case'],
      ['a leading hyphen', '-alice', 'lower-case'],
      ['a trailing hyphen', 'alice-', 'lower-case'],
      ['a double hyphen', 'al--ice', 'lower-case'],
      ['an underscore', 'al_ice', 'lower-case'],
      ['reserved', 'api', 'reserved'],
      ['reserved', 'docs', 'reserved'],
      ['reserved', 'well-known', 'reserved'],
    ])('refuses a handle %s (%s) with 400 naming handle', async (_name, handle, reason) => {
      t = await createTestApp({ backend });
      const res = await postCreator(t, await registrationBody(t, newWallet(), { handle }));
      expectError(res, 400, 'invalid_request');
      expect(res.json().details.issues).toEqual([
        { field: 'handle', reason: expect.stringContaining(reason) },
      ]);
    });

    it('accepts handles at the edges of the rule', async () => {
      t = await createTestApp({ backend });
      for (const handle of ['abc', 'a-b', `a${'1'.repeat(37)}z`, '0-0-0']) {
        const res = await postCreator(t, await registrationBody(t, newWallet(), { handle }));
        expect(res.statusCode, `${handle}: ${res.body}`).toBe(201);
      }
    });

    it('refuses a taken handle with 400 invalid_request naming handle, without using the invite', async () => {
      t = await createTestApp({ backend });
      const first = await registrationBody(t);
      expect((await postCreator(t, first)).statusCode).toBe(201);
      const wallet = newWallet();
      const second = await registrationBody(t, wallet, { handle: first.handle });
      const res = await postCreator(t, second);
      expectError(res, 400, 'invalid_request');
      expect(res.json().details.issues).toEqual([{ field: 'handle', reason: 'already taken' }]);
      // Neither the invite nor the challenge was used: a new handle succeeds with them.
      expect((await postCreator(t, { ...second, handle: uniqueHandle() })).statusCode).toBe(201);
    });

    it('refuses a payout address bound to another creator', async () => {
      t = await createTestApp({ backend });
      const wallet = newWallet();
      expect((await postCreator(t, await registrationBody(t, wallet))).statusCode).toBe(201);
      const res = await postCreator(t, await registrationBody(t, wallet));
      expectError(res, 400, 'invalid_request');
      expect(res.json().details.issues).toEqual([
        { field: 'payout_address', reason: 'already bound to another creator' },
      ]);
    });

    it.each([
      ['a bad payout address', { payout_address: '0x12' }, 'payout_address'],
      ['a bad abuse contact', { abuse_contact: 'not an email' }, 'abuse_contact'],
      ['an unknown field', { price: '1' }, 'price'],
      ['a malformed address_proof', { address_proof: { nonce: 'x' } }, 'address_proof.signature'],
    ])('refuses %s with 400 invalid_request', async (_name, patch, field) => {
      t = await createTestApp({ backend });
      const res = await postCreator(t, { ...(await registrationBody(t)), ...patch });
      expectError(res, 400, 'invalid_request');
      expect(res.json().details.issues.map((issue: { field: string }) => issue.field)).toContain(field);
    });

    it('refuses a body that is not JSON', async () => {
      t = await createTestApp({ backend });
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/creators',
        payload: '{"handle":',
        headers: { 'content-type': 'application/json' },
      });
      expectError(res, 400, 'invalid_request');
    });

    it('limits registration to 5 per hour per IP', async () => {
      t = await createTestApp({ backend });
      const ip = freshIp();
      for (let i = 0; i < 5; i++) {
        expect((await postCreator(t, await registrationBody(t), {}, ip)).statusCode).toBe(201);
      }
      const res = await postCreator(t, await registrationBody(t), {}, ip);
      expectError(res, 429, 'rate_limited');
      expect(res.json().retry_after_seconds).toBeGreaterThan(3500);
      expect((await postCreator(t, await registrationBody(t), {}, freshIp())).statusCode).toBe(201);
    });
  });

  describe('compliance', () => {
    it('refuses a sanctioned payout address with 403 sanctioned_counterparty', async () => {
      const wallet = newWallet();
      const dir = await mkdtemp(path.join(os.tmpdir(), 'repo402-sanctions-'));
      const file = path.join(dir, 'sanctions.txt');
      await writeFile(file, `# OFAC sample\n${wallet.address.toLowerCase()}  # listed\n`);
      try {
        t = await createTestApp({ backend, env: { SANCTIONS_FILE: file } });
        expectError(await postCreator(t, await registrationBody(t, wallet)), 403, 'sanctioned_counterparty');
        expect((await postCreator(t, await registrationBody(t))).statusCode).toBe(201);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });

    it('refuses a blocked jurisdiction with 451 blocked_jurisdiction', async () => {
      t = await createTestApp({
        backend,
        env: { COUNTRY_HEADER: 'CF-IPCountry', BLOCKED_COUNTRIES: 'KP, ir' },
      });
      for (const country of ['KP', 'ir']) {
        const res = await postCreator(t, await registrationBody(t), { 'cf-ipcountry': country });
        expectError(res, 451, 'blocked_jurisdiction');
      }
      expect((await postCreator(t, await registrationBody(t), { 'cf-ipcountry': 'DE' })).statusCode).toBe(
        201,
      );
      expect((await postCreator(t, await registrationBody(t))).statusCode).toBe(201);
    });

    it('checks no jurisdiction when no country header is configured', async () => {
      t = await createTestApp({ backend, env: { BLOCKED_COUNTRIES: 'KP' } });
      const res = await postCreator(t, await registrationBody(t), { 'cf-ipcountry': 'KP' });
      expect(res.statusCode).toBe(201);
    });
  });

  describe('Idempotency-Key', () => {
    it('replays the identical 201 body for 24 hours', async () => {
      t = await createTestApp({ backend });
      const key = randomUUID();
      const body = await registrationBody(t);
      const first = await postCreator(t, body, { 'idempotency-key': key });
      expect(first.statusCode).toBe(201);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      t.clock.advance(IDEMPOTENCY_WINDOW_MS - 1000);
      const replay = await postCreator(t, body, { 'idempotency-key': key });
      expect(replay.statusCode).toBe(201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body).toBe(first.body);
      expect(await t.ctx.database.db.select().from(creators)).toHaveLength(1);
      // The stored response holds no readable API key.
      const records = await t.ctx.database.db.select().from(idempotencyRecords);
      expect(JSON.stringify(records)).not.toContain(first.json().api_key);
      expect(JSON.stringify(records)).not.toContain(key);
    });

    it('after APP_SECRET is rotated, a replay says its response cannot be replayed instead of failing', async () => {
      t = await createTestApp({ backend });
      const key = randomUUID();
      const body = await registrationBody(t);
      expect((await postCreator(t, body, { 'idempotency-key': key })).statusCode).toBe(201);
      // What a restart with a new APP_SECRET gives every reader of the secret.
      t.ctx.appSecret = randomBytes(32);
      const replay = await postCreator(t, body, { 'idempotency-key': key });
      expect(replay.statusCode, replay.body).toBe(400);
      expect(replay.json()).toMatchObject({
        code: 'invalid_request',
        details: { issues: [{ field: 'Idempotency-Key' }] },
      });
      expect(replay.json().message).toMatch(/done already/);
      expect(await t.ctx.database.db.select().from(creators)).toHaveLength(1);
    });

    it('does not count replays against the registration limit; new registrations still are', async () => {
      t = await createTestApp({ backend });
      const ip = freshIp();
      const key = randomUUID();
      const body = await registrationBody(t);
      expect((await postCreator(t, body, { 'idempotency-key': key }, ip)).statusCode).toBe(201);
      for (let i = 0; i < 6; i++) {
        const replay = await postCreator(t, body, { 'idempotency-key': key }, ip);
        expect(replay.statusCode, replay.body).toBe(201);
        expect(replay.headers['idempotent-replayed']).toBe('true');
      }
      for (let i = 0; i < 4; i++) {
        expect((await postCreator(t, await registrationBody(t), {}, ip)).statusCode).toBe(201);
      }
      expectError(await postCreator(t, await registrationBody(t), {}, ip), 429, 'rate_limited');
      // A new key is a new registration, limited like one.
      const fresh = await postCreator(t, await registrationBody(t), { 'idempotency-key': randomUUID() }, ip);
      expectError(fresh, 429, 'rate_limited');
    });

    it('stops replaying after 24 hours', async () => {
      t = await createTestApp({ backend });
      const key = randomUUID();
      const body = await registrationBody(t);
      expect((await postCreator(t, body, { 'idempotency-key': key })).statusCode).toBe(201);
      t.clock.advance(IDEMPOTENCY_WINDOW_MS);
      // Now it is a new request, and its challenge and invite are used up.
      const late = await postCreator(t, body, { 'idempotency-key': key });
      expect(late.statusCode).toBe(400);
    });

    it('refuses the same key with a different body', async () => {
      t = await createTestApp({ backend });
      const key = randomUUID();
      const body = await registrationBody(t);
      expect((await postCreator(t, body, { 'idempotency-key': key })).statusCode).toBe(201);
      const res = await postCreator(
        t,
        { ...body, abuse_contact: 'other@example.com' },
        { 'idempotency-key': key },
      );
      expectError(res, 400, 'invalid_request');
      expect(res.json().details.issues).toEqual([
        { field: 'Idempotency-Key', reason: 'already used with a different request body' },
      ]);
    });

    it('does not record failures: a corrected request with the same key succeeds', async () => {
      t = await createTestApp({ backend });
      const key = randomUUID();
      const body = await registrationBody(t);
      const stale = await postCreator(
        t,
        { ...body, accepted_terms_version: 'old' },
        { 'idempotency-key': key },
      );
      expectError(stale, 409, 'terms_version_stale');
      expect((await postCreator(t, body, { 'idempotency-key': key })).statusCode).toBe(201);
    });

    it('refuses a key that is not a UUID', async () => {
      t = await createTestApp({ backend });
      const res = await postCreator(t, await registrationBody(t), { 'idempotency-key': 'abc' });
      expectError(res, 400, 'invalid_request');
      expect(res.json().details.issues[0].field).toBe('idempotency-key');
    });

    it('creates one creator for concurrent requests with one key, and all get its body', async () => {
      t = await createTestApp({ backend });
      const key = randomUUID();
      const body = await registrationBody(t);
      const ip = freshIp();
      const results = await Promise.all(
        Array.from({ length: 5 }, () => postCreator(t, body, { 'idempotency-key': key }, ip)),
      );
      expect(results.map((res) => res.statusCode)).toEqual([201, 201, 201, 201, 201]);
      expect(new Set(results.map((res) => res.body)).size).toBe(1);
      expect(await t.ctx.database.db.select().from(creators)).toHaveLength(1);
      expect(await t.ctx.database.db.select().from(apiKeys)).toHaveLength(1);
    });

    it('creates one creator for concurrent requests without a key', async () => {
      t = await createTestApp({ backend });
      const body = await registrationBody(t);
      const results = await Promise.all(Array.from({ length: 5 }, () => postCreator(t, body)));
      expect(results.filter((res) => res.statusCode === 201)).toHaveLength(1);
      expect(await t.ctx.database.db.select().from(creators)).toHaveLength(1);
    });
  });
});

describe.each(RATE_LIMIT_STORES)('the registration limit in $store', ({ env }) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  /** A shared Redis keeps a counter for its hour across test runs: each test has an address of its own. */
  const ownIp = () => `fd00:${randomBytes(6).toString('hex').match(/.{4}/g)!.join(':')}::1`;

  it('is not used up by attempts refused before the signature check, malformed ones included', async () => {
    t = await createTestApp({ env });
    const ip = ownIp();
    const malformed: unknown[] = [
      {},
      { ...(await registrationBody(t)), handle: undefined },
      { ...(await registrationBody(t)), payout_address: '0x12' },
      { ...(await registrationBody(t)), payout_address: 'not an address' },
      { ...(await registrationBody(t)), address_proof: { nonce: 'x' } },
      { ...(await registrationBody(t)), price: '1' },
    ];
    const responses = [
      await t.app.inject({
        method: 'POST',
        url: '/api/creators',
        payload: '{"handle":',
        headers: { 'content-type': 'application/json' },
        remoteAddress: ip,
      }),
    ];
    for (const body of malformed) responses.push(await postCreator(t, body, {}, ip));
    for (const res of responses) {
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toMatchObject({
        code: 'invalid_request',
        message: expect.any(String),
        docs_url: `${TEST_BASE_URL}/docs/errors#invalid_request`,
      });
    }
    // Well-formed, but refused before any signature is checked.
    expectError(
      await postCreator(
        t,
        await registrationBody(t, newWallet(), { accepted_terms_version: '2020-01-01' }),
        {},
        ip,
      ),
      409,
      'terms_version_stale',
    );
    expectError(
      await postCreator(t, { ...(await registrationBody(t)), invite_code: undefined }, {}, ip),
      403,
      'invite_required',
    );
    expectError(
      await postCreator(t, { ...(await registrationBody(t)), address_proof: undefined }, {}, ip),
      400,
      'payout_address_unverified',
    );

    for (let i = 0; i < 5; i++)
      expect((await postCreator(t, await registrationBody(t), {}, ip)).statusCode).toBe(201);
    expectError(await postCreator(t, await registrationBody(t), {}, ip), 429, 'rate_limited');
  });

  it('still answers 429 once requests refused before the signature check use up the route budget', async () => {
    // Those do not use up the 5 per hour, but each costs lookups: the route has the auth budget too.
    t = await createTestApp({ env: { ...env, RATE_LIMIT_AUTH: '3/60' } });
    // Refused for its terms before its proof is read, so the proof need not come from a challenge
    // (whose route, in a shared Redis, other tests' requests from this address count against too).
    const stale = (ip: string) =>
      postCreator(
        t,
        {
          handle: uniqueHandle(),
          payout_address: newWallet().address,
          accepted_terms_version: '2020-01-01',
          address_proof: { nonce: 'not read', signature: '0x00' },
          abuse_contact: 'abuse@example.com',
        },
        {},
        ip,
      );
    const ip = ownIp();
    for (let i = 0; i < 3; i++) expectError(await stale(ip), 409, 'terms_version_stale');
    expectError(await stale(ip), 429, 'rate_limited');
    // Another client has its own budget.
    expectError(await stale(ownIp()), 409, 'terms_version_stale');
  });

  it('shows in its rate-limit headers whichever of its two budgets is nearer its end', async () => {
    t = await createTestApp({ env: { ...env, RATE_LIMIT_AUTH: '7/60' } });
    const budget = (res: { headers: Record<string, unknown> }) => [
      res.headers['x-ratelimit-limit'],
      res.headers['x-ratelimit-remaining'],
    ];
    const stale = async (ip: string) =>
      postCreator(
        t,
        await registrationBody(t, newWallet(), { accepted_terms_version: '2020-01-01' }),
        {},
        ip,
      );
    const register = async (ip: string) => postCreator(t, await registrationBody(t), {}, ip);

    // Refused before the signature check: only the route's auth budget (7 a minute) counted it.
    const ip = ownIp();
    const refusedEarly = await stale(ip);
    expectError(refusedEarly, 409, 'terms_version_stale');
    expect(budget(refusedEarly)).toEqual(['7', '6']);
    // Registrations: the registration budget (5 an hour) is nearer its end than the auth one.
    const remaining = [];
    for (let i = 0; i < 5; i++) {
      const res = await register(ip);
      expect(res.statusCode, res.body).toBe(201);
      remaining.push(budget(res));
    }
    expect(remaining).toEqual([
      ['5', '4'],
      ['5', '3'],
      ['5', '2'],
      ['5', '1'],
      ['5', '0'],
    ]);
    const refused = await register(ip);
    expectError(refused, 429, 'rate_limited');
    expect(budget(refused)).toEqual(['5', '0']);

    // Another client spends its auth budget first: that one is shown, and it refuses first.
    const other = ownIp();
    for (let i = 0; i < 5; i++) expectError(await stale(other), 409, 'terms_version_stale');
    for (const left of ['1', '0']) {
      const res = await register(other);
      expect(res.statusCode, res.body).toBe(201);
      expect(budget(res)).toEqual(['7', left]);
    }
    const overAuth = await register(other);
    expectError(overAuth, 429, 'rate_limited');
    expect(budget(overAuth)).toEqual(['7', '0']);
  });

  it('refuses with the later reset when both budgets are used up, in its headers and retry-after', async () => {
    // An auth budget whose window (2 hours) outlasts the registration one's (1 hour).
    t = await createTestApp({ env: { ...env, RATE_LIMIT_AUTH: '6/7200' } });
    const ip = ownIp();
    for (let i = 0; i < 5; i++) {
      const res = await postCreator(t, await registrationBody(t), {}, ip);
      expect(res.statusCode, res.body).toBe(201);
    }
    // The sixth uses up the auth budget and is refused by the registration one.
    const refused = await postCreator(t, await registrationBody(t), {}, ip);
    expectError(refused, 429, 'rate_limited');
    expect([refused.headers['x-ratelimit-limit'], refused.headers['x-ratelimit-remaining']]).toEqual([
      '6',
      '0',
    ]);
    const retryAfter = refused.json().retry_after_seconds;
    expect(retryAfter).toBeGreaterThan(3600);
    expect(retryAfter).toBeLessThanOrEqual(7200);
    expect(refused.headers['retry-after']).toBe(String(retryAfter));
    expect(refused.headers['x-ratelimit-reset']).toBe(String(retryAfter));
  });

  it('is used up by attempts that carry a signature, valid or not, in every process sharing the store', async () => {
    t = await createTestApp({ env });
    // In Redis, a second process: what one counts, the other refuses.
    const other = env.REDIS_URL ? await createTestApp({ env }) : t;
    const ip = ownIp();
    try {
      for (let i = 0; i < 5; i++) {
        const app = i % 2 ? other : t;
        const wallet = newWallet();
        const forged = await signedChallenge(app, wallet, 'address_proof', { signer: newWallet() });
        const res = await postCreator(
          app,
          await registrationBody(app, wallet, { address_proof: forged }),
          {},
          ip,
        );
        expectError(res, 400, 'payout_address_unverified');
      }
    } finally {
      if (other !== t) await other.close();
    }
    const res = await postCreator(t, await registrationBody(t), {}, ip);
    expect(res.statusCode).toBe(429);
    const body = res.json();
    expect(body).toEqual({
      code: 'rate_limited',
      message: expect.any(String),
      docs_url: `${TEST_BASE_URL}/docs/errors#rate_limited`,
      retry_after_seconds: expect.any(Number),
    });
    expect(body.retry_after_seconds).toBeGreaterThan(3500);
    expect(body.retry_after_seconds).toBeLessThanOrEqual(3600);
    expect(res.headers['retry-after']).toBe(String(body.retry_after_seconds));
    expect(await t.ctx.database.db.select().from(creators)).toHaveLength(0);
  });
});
