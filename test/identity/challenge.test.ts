import { parseSiweMessage } from 'viem/siwe';
import { afterEach, describe, expect, it } from 'vitest';
import { challenges } from '../../src/db/schema/index.js';
import { assertChallengeDomain, CHALLENGE_TTL_MS } from '../../src/identity/challenges.js';
import { encodeWalletSignature, verifyWalletSignatureHeader } from '../../src/identity/wallet-signature.js';
import { createTestApp, TEST_BASE_URL, type TestApp } from '../support/app.js';
import { BACKENDS } from '../support/db.js';
import {
  bearer,
  expectError,
  getChallenge,
  newWallet,
  registerCreator,
  signedChallenge,
  walletSignatureHeader,
} from './support.js';

describe.each(BACKENDS)('GET /api/auth/challenge on %s', (backend) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  it('answers an EIP-4361 message bound to the purpose, expiring in 5 minutes', async () => {
    t = await createTestApp({ backend });
    const wallet = newWallet();
    const res = await t.app.inject({
      url: `/api/auth/challenge?address=${wallet.address.toLowerCase()}&purpose=address_proof`,
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual([
      'address',
      'expires_at',
      'issued_at',
      'message',
      'nonce',
      'purpose',
    ]);
    expect(body).toMatchObject({
      purpose: 'address_proof',
      address: wallet.address,
      issued_at: t.clock.now().toISOString(),
      expires_at: new Date(t.clock.now().getTime() + CHALLENGE_TTL_MS).toISOString(),
    });
    expect(body.nonce).toMatch(/^[0-9a-f]{32}$/);
    const parsed = parseSiweMessage(body.message);
    expect(parsed).toMatchObject({
      domain: new URL(TEST_BASE_URL).host,
      uri: TEST_BASE_URL,
      address: wallet.address,
      chainId: 8453,
      nonce: body.nonce,
      version: '1',
      resources: ['urn:repo402:purpose:address_proof'],
    });
    expect(parsed.issuedAt?.toISOString()).toBe(body.issued_at);
    expect(parsed.expirationTime?.toISOString()).toBe(body.expires_at);
  });

  it('names the one new payout address a step_up may bind', async () => {
    t = await createTestApp({ backend });
    const wallet = newWallet();
    const next = newWallet();
    const body = await getChallenge(t, wallet.address, 'step_up', next.address.toLowerCase());
    expect(parseSiweMessage(body.message).resources).toEqual([
      'urn:repo402:purpose:step_up',
      `urn:repo402:new_payout_address:${next.address}`,
    ]);
    expect(body.message).toContain(`payout address to ${next.address}`);
  });

  it('gives every request a fresh nonce and stores the exact message', async () => {
    t = await createTestApp({ backend });
    const wallet = newWallet();
    const a = await getChallenge(t, wallet.address, 'wallet_ownership');
    const b = await getChallenge(t, wallet.address, 'wallet_ownership');
    expect(a.nonce).not.toBe(b.nonce);
    const rows = await t.ctx.database.db.select().from(challenges);
    expect(rows.map((row) => row.message).sort()).toEqual([a.message, b.message].sort());
  });

  it.each([
    ['no purpose (there is no default)', 'address=0x0000000000000000000000000000000000000001', 'purpose'],
    ['an unknown purpose', 'address=0x0000000000000000000000000000000000000001&purpose=login', 'purpose'],
    ['no address', 'purpose=step_up', 'address'],
    ['a short address', 'address=0x1234&purpose=step_up', 'address'],
    [
      'a mis-checksummed address',
      'address=0xA0CF798816D4b9b9866b5330EEa46a18382f251e&purpose=step_up',
      'address',
    ],
    [
      'a bad new_payout_address',
      'address=0x0000000000000000000000000000000000000001&purpose=step_up&new_payout_address=nope',
      'new_payout_address',
    ],
    [
      'new_payout_address with another purpose',
      'address=0x0000000000000000000000000000000000000001&purpose=rotate_key&new_payout_address=0x0000000000000000000000000000000000000002',
      'new_payout_address',
    ],
    [
      'an unknown parameter',
      'address=0x0000000000000000000000000000000000000001&purpose=step_up&chain=1',
      'chain',
    ],
  ])('refuses %s with 400 invalid_request naming the field', async (_name, query, field) => {
    t = await createTestApp({ backend });
    const res = await t.app.inject({ url: `/api/auth/challenge?${query}` });
    expectError(res, 400, 'invalid_request');
    expect(res.json().details.issues.map((issue: { field: string }) => issue.field)).toContain(field);
  });

  it('is rate limited in the auth class', async () => {
    t = await createTestApp({ backend, env: { RATE_LIMIT_AUTH: '2/60' } });
    const url = `/api/auth/challenge?address=${newWallet().address}&purpose=step_up`;
    expect((await t.app.inject({ url })).statusCode).toBe(200);
    expect((await t.app.inject({ url })).statusCode).toBe(200);
    const res = await t.app.inject({ url });
    expectError(res, 429, 'rate_limited');
    expect(res.headers['retry-after']).toBeDefined();
  });
});

describe('challenge domain', () => {
  it('refuses at start-up a BASE_URL whose host cannot be a sign-in domain', () => {
    expect(() => assertChallengeDomain('http://[::1]:8402')).toThrow(/BASE_URL/);
    for (const url of ['http://localhost:8402', 'https://repo402.example', 'http://127.0.0.1:8402']) {
      expect(() => assertChallengeDomain(url)).not.toThrow();
    }
  });
});

/**
 * The rules every signed challenge obeys, shown on POST /api/auth/rotate-key (the rotation
 * signature is the whole credential there, so nothing else can mask a failure).
 */
describe.each(BACKENDS)('signed challenges on %s', (backend) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  const rotate = (body: object) =>
    t.app.inject({ method: 'POST', url: '/api/auth/rotate-key', payload: body });

  it('are single use', async () => {
    t = await createTestApp({ backend });
    const creator = await registerCreator(t);
    const proof = await signedChallenge(t, creator.wallet, 'rotate_key');
    const body = { address: creator.wallet.address, ...proof };
    expect((await rotate(body)).statusCode).toBe(200);
    const again = await rotate(body);
    expectError(again, 401, 'invalid_signature');
    expect(again.json().message).toMatch(/already used/);
  });

  it('expire after 5 minutes', async () => {
    t = await createTestApp({ backend });
    const creator = await registerCreator(t);
    const early = await signedChallenge(t, creator.wallet, 'rotate_key');
    const late = await signedChallenge(t, creator.wallet, 'rotate_key');
    t.clock.advance(CHALLENGE_TTL_MS - 1);
    expect((await rotate({ address: creator.wallet.address, ...early })).statusCode).toBe(200);
    t.clock.advance(1);
    const res = await rotate({ address: creator.wallet.address, ...late });
    expectError(res, 401, 'invalid_signature');
    expect(res.json().message).toMatch(/expired/);
  });

  it('are bound to their purpose and refused on any other route', async () => {
    t = await createTestApp({ backend });
    const creator = await registerCreator(t);
    for (const purpose of ['address_proof', 'step_up', 'wallet_ownership'] as const) {
      const proof = await signedChallenge(t, creator.wallet, purpose);
      const res = await rotate({ address: creator.wallet.address, ...proof });
      expectError(res, 401, 'invalid_signature');
      expect(res.json().message).toMatch(/another purpose/);
    }
    // A rotate_key challenge is refused as X-Wallet-Signature, the wallet_ownership route.
    const rotateProof = await signedChallenge(t, creator.wallet, 'rotate_key');
    await expect(
      verifyWalletSignatureHeader(
        t.ctx,
        encodeWalletSignature({ address: creator.wallet.address, ...rotateProof }),
      ),
    ).rejects.toMatchObject({ code: 'invalid_signature' });
    // …and the rotate_key challenge is still good on its own route.
    expect((await rotate({ address: creator.wallet.address, ...rotateProof })).statusCode).toBe(200);
  });

  it('are bound to the address they were issued to', async () => {
    t = await createTestApp({ backend });
    const creator = await registerCreator(t);
    const other = newWallet();
    // Issued to another wallet and signed by it: the creator's address does not match the challenge.
    const proof = await signedChallenge(t, other, 'rotate_key');
    const res = await rotate({ address: creator.wallet.address, ...proof });
    expectError(res, 401, 'invalid_signature');
    expect(res.json().message).toMatch(/another address/);
  });

  it('need a signature that recovers to the address', async () => {
    t = await createTestApp({ backend });
    const creator = await registerCreator(t);
    const forged = await signedChallenge(t, creator.wallet, 'rotate_key', { signer: newWallet() });
    const res = await rotate({ address: creator.wallet.address, ...forged });
    expectError(res, 401, 'invalid_signature');
    expect(res.json().message).toMatch(/does not match/);
    // A failed attempt does not use the challenge up: the real signature over it still works.
    const real = await creator.wallet.signMessage({
      message: (await t.ctx.database.db.select().from(challenges)).find((row) => row.nonce === forged.nonce)!
        .message,
    });
    expect(
      (await rotate({ address: creator.wallet.address, nonce: forged.nonce, signature: real })).statusCode,
    ).toBe(200);
  });

  it('must be signed over the exact stored message', async () => {
    t = await createTestApp({ backend });
    const creator = await registerCreator(t);
    const challenge = await getChallenge(t, creator.wallet.address, 'rotate_key');
    const altered = challenge.message.replace('Chain ID: 8453', 'Chain ID: 1');
    const signature = await creator.wallet.signMessage({ message: altered });
    const res = await rotate({ address: creator.wallet.address, nonce: challenge.nonce, signature });
    expectError(res, 401, 'invalid_signature');
  });

  it.each([
    ['an unknown nonce', { nonce: 'f'.repeat(32) }, /Unknown/],
    ['a malformed nonce', { nonce: 'not-a-nonce' }, /malformed/],
    ['a malformed signature', { signature: 'zz' }, /does not match/],
    ['an empty signature', { signature: '0x' }, /does not match/],
    ['a truncated signature', { signature: `0x${'ab'.repeat(30)}` }, /does not match/],
  ])('refuse %s with 401 invalid_signature', async (_name, patch, message) => {
    t = await createTestApp({ backend });
    const creator = await registerCreator(t);
    const proof = await signedChallenge(t, creator.wallet, 'rotate_key');
    const res = await rotate({ address: creator.wallet.address, ...proof, ...patch });
    expectError(res, 401, 'invalid_signature');
    expect(res.json().message).toMatch(message);
  });

  it('succeed at most once when used concurrently', async () => {
    t = await createTestApp({ backend });
    const creator = await registerCreator(t);
    const proof = await signedChallenge(t, creator.wallet, 'rotate_key');
    const results = await Promise.all(
      Array.from({ length: 8 }, () => rotate({ address: creator.wallet.address, ...proof })),
    );
    const statuses = results.map((res) => res.statusCode).sort();
    expect(statuses).toEqual([200, 401, 401, 401, 401, 401, 401, 401]);
    // Exactly one new key was issued, and it is the one that works.
    const winner = results.find((res) => res.statusCode === 200)!.json().api_key;
    expect((await t.app.inject({ url: '/api/creators/me', headers: bearer(winner) })).statusCode).toBe(200);
  });

  it('succeed at most once as concurrent X-Wallet-Signature headers', async () => {
    t = await createTestApp({ backend });
    const header = await walletSignatureHeader(t, newWallet());
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, () => verifyWalletSignatureHeader(t.ctx, header)),
    );
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
  });
});
