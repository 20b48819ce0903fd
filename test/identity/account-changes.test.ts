import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { PrivateKeyAccount } from 'viem/accounts';
import { afterEach, describe, expect, it } from 'vitest';
import { outboxMessages } from '../../src/db/schema/index.js';
import { CHALLENGE_TTL_MS } from '../../src/identity/challenges.js';
import { abuseContactInForce, CHANGE_DELAY_MS, payoutAddressInForce } from '../../src/identity/creators.js';
import { drainOutbox } from '../../src/identity/outbox.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { BACKENDS } from '../support/db.js';
import {
  bearer,
  expectError,
  newWallet,
  postCreator,
  type RegisteredCreator,
  registerCreator,
  registrationBody,
  signedChallenge,
} from './support.js';

describe.each(BACKENDS)('PATCH /api/creators/me on %s', (backend) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  const patch = (apiKey: string, payload: object, headers: Record<string, string> = {}) =>
    t.app.inject({
      method: 'PATCH',
      url: '/api/creators/me',
      headers: { ...bearer(apiKey), ...headers },
      payload,
    });
  const me = async (apiKey: string) =>
    (await t.app.inject({ url: '/api/creators/me', headers: bearer(apiKey) })).json();
  const rotate = async (wallet: PrivateKeyAccount) =>
    t.app.inject({
      method: 'POST',
      url: '/api/auth/rotate-key',
      payload: { address: wallet.address, ...(await signedChallenge(t, wallet, 'rotate_key')) },
    });

  /** A valid payout rebind of `creator` (signed by `bound`, the payout wallet in force) to `next`. */
  async function rebind(creator: RegisteredCreator, next: PrivateKeyAccount, bound = creator.wallet) {
    return patch(creator.apiKey, {
      payout_address: next.address,
      step_up: await signedChallenge(t, bound, 'step_up', { newPayoutAddress: next.address }),
      address_proof: await signedChallenge(t, next, 'address_proof'),
    });
  }

  describe('payout address', () => {
    it('is pending for 48 hours, during which the old address stays in force', async () => {
      t = await createTestApp({ backend });
      const creator = await registerCreator(t);
      const next = newWallet();
      const requestedAt = t.clock.now();
      const effectiveAt = new Date(requestedAt.getTime() + CHANGE_DELAY_MS);
      const res = await rebind(creator, next);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({
        payout_address: creator.wallet.address,
        pending_changes: [
          {
            field: 'payout_address',
            value: next.address,
            requested_at: requestedAt.toISOString(),
            effective_at: effectiveAt.toISOString(),
          },
        ],
      });
      const db = t.ctx.database.db;

      t.clock.set(new Date(effectiveAt.getTime() - 1));
      expect(await payoutAddressInForce(db, creator.id, t.clock.now())).toBe(creator.wallet.address);
      expect((await me(creator.apiKey)).payout_address).toBe(creator.wallet.address);
      // The old address is still the bound one: it rotates keys; the new one cannot yet.
      expectError(await rotate(next), 404, 'not_found');
      const rotated = await rotate(creator.wallet);
      expect(rotated.statusCode).toBe(200);
      const apiKey = rotated.json().api_key;

      t.clock.set(effectiveAt);
      expect(await payoutAddressInForce(db, creator.id, t.clock.now())).toBe(next.address);
      // Asking about a past moment still answers with what was in force then.
      expect(await payoutAddressInForce(db, creator.id, requestedAt)).toBe(creator.wallet.address);
      expect(await me(apiKey)).toMatchObject({ payout_address: next.address, pending_changes: [] });
      expectError(await rotate(creator.wallet), 404, 'not_found');
      expect((await rotate(next)).statusCode).toBe(200);
    });

    it('needs step_up from the new payout address once it is in force', async () => {
      t = await createTestApp({ backend });
      const creator = await registerCreator(t);
      const next = newWallet();
      expect((await rebind(creator, next)).statusCode).toBe(200);
      t.clock.advance(CHANGE_DELAY_MS);
      const stepUpFromOld = await signedChallenge(t, creator.wallet, 'step_up');
      expectError(
        await patch(creator.apiKey, { abuse_contact: 'x@example.com', step_up: stepUpFromOld }),
        403,
        'step_up_required',
      );
      const stepUpFromNew = await signedChallenge(t, next, 'step_up');
      expect(
        (await patch(creator.apiKey, { abuse_contact: 'x@example.com', step_up: stepUpFromNew })).statusCode,
      ).toBe(200);
    });

    it('refuses a rebind whose step_up was minted without new_payout_address', async () => {
      t = await createTestApp({ backend });
      const creator = await registerCreator(t);
      const next = newWallet();
      const res = await patch(creator.apiKey, {
        payout_address: next.address,
        step_up: await signedChallenge(t, creator.wallet, 'step_up'),
        address_proof: await signedChallenge(t, next, 'address_proof'),
      });
      expectError(res, 403, 'step_up_required');
      expect(res.json().message).toMatch(/new_payout_address/);
      expect((await me(creator.apiKey)).pending_changes).toEqual([]);
    });

    it('refuses a rebind to an address other than the one the step_up names', async () => {
      t = await createTestApp({ backend });
      const creator = await registerCreator(t);
      const named = newWallet();
      const other = newWallet();
      const res = await patch(creator.apiKey, {
        payout_address: other.address,
        step_up: await signedChallenge(t, creator.wallet, 'step_up', { newPayoutAddress: named.address }),
        address_proof: await signedChallenge(t, other, 'address_proof'),
      });
      expectError(res, 403, 'step_up_required');
    });

    it('refuses a rebind step_up used for anything but that rebind', async () => {
      t = await createTestApp({ backend });
      const creator = await registerCreator(t);
      const res = await patch(creator.apiKey, {
        abuse_contact: 'new@example.com',
        step_up: await signedChallenge(t, creator.wallet, 'step_up', {
          newPayoutAddress: newWallet().address,
        }),
      });
      expectError(res, 403, 'step_up_required');
    });

    it('needs an address_proof from the new address', async () => {
      t = await createTestApp({ backend });
      const creator = await registerCreator(t);
      const next = newWallet();
      const stepUp = await signedChallenge(t, creator.wallet, 'step_up', { newPayoutAddress: next.address });
      expectError(
        await patch(creator.apiKey, { payout_address: next.address, step_up: stepUp }),
        400,
        'payout_address_unverified',
      );
      // A proof signed by the old wallet does not prove the new one.
      expectError(
        await patch(creator.apiKey, {
          payout_address: next.address,
          step_up: stepUp,
          address_proof: await signedChallenge(t, creator.wallet, 'address_proof'),
        }),
        400,
        'payout_address_unverified',
      );
      expectError(
        await patch(creator.apiKey, {
          payout_address: next.address,
          step_up: stepUp,
          address_proof: await signedChallenge(t, next, 'address_proof', { signer: newWallet() }),
        }),
        400,
        'payout_address_unverified',
      );
      // The refused attempts did not use the step_up up.
      const ok = await patch(creator.apiKey, {
        payout_address: next.address,
        step_up: stepUp,
        address_proof: await signedChallenge(t, next, 'address_proof'),
      });
      expect(ok.statusCode, ok.body).toBe(200);
    });

    it('refuses an address bound to another creator', async () => {
      t = await createTestApp({ backend });
      const creator = await registerCreator(t);
      const other = await registerCreator(t);
      const res = await rebind(creator, other.wallet);
      expectError(res, 400, 'invalid_request');
      expect(res.json().details.issues).toEqual([
        { field: 'payout_address', reason: 'already bound to another creator' },
      ]);
    });

    it('keeps a requested address bound to its creator: nobody else can register it', async () => {
      t = await createTestApp({ backend });
      const creator = await registerCreator(t);
      const next = newWallet();
      expect((await rebind(creator, next)).statusCode).toBe(200);
      const res = await postCreator(t, await registrationBody(t, next));
      expectError(res, 400, 'invalid_request');
    });

    it('replaces a pending change with a newer one, and cancels it when the value in force is sent', async () => {
      t = await createTestApp({ backend });
      const creator = await registerCreator(t);
      const first = newWallet();
      const second = newWallet();
      expect((await rebind(creator, first)).statusCode).toBe(200);
      t.clock.advance(60 * 60 * 1000);
      const replaced = await rebind(creator, second);
      expect(replaced.json().pending_changes).toEqual([
        expect.objectContaining({
          value: second.address,
          effective_at: new Date(t.clock.now().getTime() + CHANGE_DELAY_MS).toISOString(),
        }),
      ]);
      const cancelled = await rebind(creator, creator.wallet);
      expect(cancelled.statusCode, cancelled.body).toBe(200);
      expect(cancelled.json().pending_changes).toEqual([]);
      t.clock.advance(CHANGE_DELAY_MS * 2);
      expect(await payoutAddressInForce(t.ctx.database.db, creator.id, t.clock.now())).toBe(
        creator.wallet.address,
      );
    });

    it('refuses a sanctioned new address with 403 sanctioned_counterparty', async () => {
      const next = newWallet();
      const dir = await mkdtemp(path.join(os.tmpdir(), 'repo402-sanctions-'));
      const file = path.join(dir, 'list.txt');
      await writeFile(file, `${next.address.toUpperCase().replace('0X', '0x')}\n`);
      try {
        t = await createTestApp({ backend, env: { SANCTIONS_FILE: file } });
        const creator = await registerCreator(t);
        expectError(await rebind(creator, next), 403, 'sanctioned_counterparty');
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });

    it('refuses a payout change from a blocked jurisdiction with 451', async () => {
      t = await createTestApp({ backend, env: { COUNTRY_HEADER: 'X-Country', BLOCKED_COUNTRIES: 'CU' } });
      const creator = await registerCreator(t);
      const next = newWallet();
      const payload = {
        payout_address: next.address,
        step_up: await signedChallenge(t, creator.wallet, 'step_up', { newPayoutAddress: next.address }),
        address_proof: await signedChallenge(t, next, 'address_proof'),
      };
      expectError(await patch(creator.apiKey, payload, { 'x-country': 'cu' }), 451, 'blocked_jurisdiction');
      expect((await patch(creator.apiKey, payload, { 'x-country': 'NL' })).statusCode).toBe(200);
    });
  });

  describe('abuse contact', () => {
    it('changes after 48 hours and is announced to the old contact (logged without SMTP)', async () => {
      t = await createTestApp({ backend });
      const creator = await registerCreator(t, { abuse_contact: 'old@example.com' });
      const res = await patch(creator.apiKey, {
        abuse_contact: 'new@example.com',
        step_up: await signedChallenge(t, creator.wallet, 'step_up'),
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({
        abuse_contact: 'old@example.com',
        pending_changes: [{ field: 'abuse_contact', value: 'new@example.com' }],
      });
      const db = t.ctx.database.db;
      expect(await abuseContactInForce(db, creator.id, t.clock.now())).toBe('old@example.com');
      t.clock.advance(CHANGE_DELAY_MS);
      expect(await abuseContactInForce(db, creator.id, t.clock.now())).toBe('new@example.com');
      expect((await me(creator.apiKey)).abuse_contact).toBe('new@example.com');

      await drainOutbox(t.ctx);
      const [message] = await db.select().from(outboxMessages);
      expect(message).toMatchObject({
        kind: 'abuse_contact_change',
        creatorId: creator.id,
        recipient: 'old@example.com',
        status: 'logged',
        attempts: 1,
      });
      expect(message!.body).toContain('new@example.com');
    });

    it('announces nothing when the request is refused', async () => {
      t = await createTestApp({ backend });
      const creator = await registerCreator(t);
      await patch(creator.apiKey, {
        abuse_contact: 'new@example.com',
        step_up: await signedChallenge(t, creator.wallet, 'step_up', { signer: newWallet() }),
      });
      await drainOutbox(t.ctx);
      expect(await t.ctx.database.db.select().from(outboxMessages)).toEqual([]);
    });
  });

  describe('step_up', () => {
    it('is required: 403 step_up_required without it', async () => {
      t = await createTestApp({ backend });
      const creator = await registerCreator(t);
      expectError(await patch(creator.apiKey, { abuse_contact: 'new@example.com' }), 403, 'step_up_required');
    });

    it('must come from the payout address in force: 403 step_up_required otherwise', async () => {
      t = await createTestApp({ backend });
      const creator = await registerCreator(t);
      const res = await patch(creator.apiKey, {
        abuse_contact: 'new@example.com',
        step_up: await signedChallenge(t, newWallet(), 'step_up'),
      });
      expectError(res, 403, 'step_up_required');
    });

    it.each(['forged', 'used', 'expired', 'wrong purpose'])(
      'refuses a %s step_up with 401 invalid_signature',
      async (kind) => {
        t = await createTestApp({ backend });
        const creator = await registerCreator(t);
        let stepUp = await signedChallenge(
          t,
          creator.wallet,
          kind === 'wrong purpose' ? 'wallet_ownership' : 'step_up',
          {
            signer: kind === 'forged' ? newWallet() : undefined,
          },
        );
        if (kind === 'used') {
          expect(
            (await patch(creator.apiKey, { abuse_contact: 'a@example.com', step_up: stepUp })).statusCode,
          ).toBe(200);
        }
        if (kind === 'expired') t.clock.advance(CHALLENGE_TTL_MS);
        expectError(
          await patch(creator.apiKey, { abuse_contact: 'b@example.com', step_up: stepUp }),
          401,
          'invalid_signature',
        );
        stepUp = { nonce: 'zz', signature: stepUp.signature };
        expectError(
          await patch(creator.apiKey, { abuse_contact: 'b@example.com', step_up: stepUp }),
          401,
          'invalid_signature',
        );
      },
    );
  });

  describe('errors and security', () => {
    it.each([
      ['no change', {}, 'body'],
      [
        'an address_proof without a payout change',
        { abuse_contact: 'a@example.com', address_proof: { nonce: 'a', signature: '0x' } },
        'address_proof',
      ],
      ['a bad abuse contact', { abuse_contact: 'nope' }, 'abuse_contact'],
      ['a bad payout address', { payout_address: '0xnope' }, 'payout_address'],
      ['an unknown field', { handle: 'renamed' }, 'handle'],
    ])('refuses %s with 400 invalid_request', async (_name, payload, field) => {
      t = await createTestApp({ backend });
      const creator = await registerCreator(t);
      const step_up = await signedChallenge(t, creator.wallet, 'step_up');
      const res = await patch(creator.apiKey, { ...payload, step_up });
      expectError(res, 400, 'invalid_request');
      expect(res.json().details.issues.map((issue: { field: string }) => issue.field)).toContain(field);
    });

    it('needs a key: 401 invalid_key', async () => {
      t = await createTestApp({ backend });
      const res = await t.app.inject({
        method: 'PATCH',
        url: '/api/creators/me',
        payload: { abuse_contact: 'a@example.com' },
      });
      expectError(res, 401, 'invalid_key');
    });

    it('changes only the caller: another creator’s wallet cannot step up for it', async () => {
      t = await createTestApp({ backend });
      const alice = await registerCreator(t);
      const mallory = await registerCreator(t);
      const res = await patch(mallory.apiKey, {
        abuse_contact: 'mallory@example.com',
        step_up: await signedChallenge(t, alice.wallet, 'step_up'),
      });
      expectError(res, 403, 'step_up_required');
      expect((await me(alice.apiKey)).pending_changes).toEqual([]);
    });

    it('is rate limited in the creator class', async () => {
      t = await createTestApp({ backend, env: { RATE_LIMIT_CREATOR: '1/60' } });
      const creator = await registerCreator(t);
      expect(
        (await t.app.inject({ url: '/api/creators/me', headers: bearer(creator.apiKey) })).statusCode,
      ).toBe(200);
      expectError(
        await t.app.inject({ url: '/api/creators/me', headers: bearer(creator.apiKey) }),
        429,
        'rate_limited',
      );
    });
  });
});
