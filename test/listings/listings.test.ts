import { execFile } from 'node:child_process';
import { rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/identity/api-keys.js';
import { bearer, expectError, type RegisteredCreator, registerCreator } from '../identity/support.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { BACKENDS } from '../support/db.js';
import { createHostedListing, createListingRequest, type SshKey, sshKeygen, uniqueSlug } from './support.js';

const exec = promisify(execFile);
let keys: { ed25519: SshKey; ecdsa: SshKey; rsa: SshKey; rsaShort: SshKey; other: SshKey };

beforeAll(async () => {
  const [ed25519, ecdsa, rsa, rsaShort, other] = await Promise.all([
    sshKeygen('ed25519'),
    sshKeygen('ecdsa'),
    sshKeygen('rsa', 2048),
    sshKeygen('rsa', 1024).catch(() => undefined),
    sshKeygen('ed25519'),
  ]);
  keys = { ed25519, ecdsa, rsa, rsaShort: rsaShort!, other };
});

describe.each(BACKENDS)('listing routes on %s', (backend) => {
  let t: TestApp;
  let alice: RegisteredCreator;
  beforeEach(async () => {
    t = await createTestApp({ backend });
    alice = await registerCreator(t);
  });
  afterEach(async () => {
    await t.close();
  });

  const get = (url: string, apiKey = alice.apiKey) =>
    t.app.inject({ method: 'GET', url, headers: bearer(apiKey) });
  const send = (
    method: 'PATCH' | 'DELETE' | 'PUT' | 'POST',
    url: string,
    payload?: object,
    apiKey = alice.apiKey,
  ) => t.app.inject({ method, url, headers: bearer(apiKey), payload });

  describe('POST /api/listings', () => {
    it('creates a hosted draft with its repository, remote, default branch and host-key fingerprints', async () => {
      const slug = uniqueSlug();
      const res = await createListingRequest(t, alice.apiKey, {
        source: 'hosted',
        slug,
        ssh_public_key: keys.ed25519.publicKey,
        price_micro: '9000000',
      });
      expect(res.statusCode, res.body).toBe(201);
      const body = res.json();
      expect(body).toMatchObject({
        owner: alice.handle,
        slug,
        source: 'hosted',
        status: 'draft',
        pricing: { price_micro: '9000000', update_price_micro: '0' },
        description: '',
        trigger_hint: '',
        licence: null,
        latest_release: null,
        remote: `ssh://git@repo402.test:${t.config.sshPort}/${alice.handle}/${slug}.git`,
        default_branch: 'main',
      });
      expect(body.newest_release).toBeUndefined();
      // The fingerprints are those ssh-keygen computes from the host key files.
      const printed = await exec('ssh-keygen', ['-lf', path.join(t.dataDir, 'ssh', 'ssh_host_ed25519_key')]);
      expect(body.host_key_fingerprints).toContainEqual({
        type: 'ssh-ed25519',
        sha256: printed.stdout.split(' ')[1],
      });
      expect(body.host_key_fingerprints).toHaveLength(2);
      const keyPrint = await exec('ssh-keygen', ['-lf', `${keys.ed25519.file}.pub`]);
      expect(body.deploy_key_fingerprint).toBe(keyPrint.stdout.split(' ')[1]);
      const repo = path.join(t.dataDir, 'repos', alice.handle, `${slug}.git`);
      expect((await stat(path.join(repo, 'HEAD'))).isFile()).toBe(true);
      const head = await exec('git', ['--git-dir', repo, 'symbolic-ref', 'HEAD']);
      expect(head.stdout.trim()).toBe('refs/heads/main');
    });

    it('accepts ecdsa and 2048-bit rsa keys', async () => {
      await createHostedListing(t, alice.apiKey, keys.ecdsa.publicKey);
      await createHostedListing(t, alice.apiKey, keys.rsa.publicKey);
    });

    it.each([
      ['a short rsa key', () => keys.rsaShort.publicKey],
      ['garbage', () => 'ssh-ed25519 not-base64!'],
      ['an unsupported type', () => keys.ed25519.publicKey.replace('ssh-ed25519', 'ssh-dss')],
      ['a mislabelled key', () => keys.ed25519.publicKey.replace('ssh-ed25519', 'ssh-rsa')],
      ['two keys', () => `${keys.ed25519.publicKey}\n${keys.other.publicKey}`],
      ['an empty string', () => ''],
    ])('refuses %s as ssh_public_key', async (_name, key) => {
      const res = await createListingRequest(t, alice.apiKey, {
        source: 'hosted',
        slug: uniqueSlug(),
        ssh_public_key: key(),
      });
      expectError(res, 400, 'invalid_request');
      expect(JSON.stringify(res.json().details)).toContain('ssh_public_key');
    });

    it.each([
      ['upper case', 'Tool-Kit'],
      ['too short', 'ab'],
      ['a leading hyphen', '-tool'],
      ['double hyphens', 'tool--kit'],
      ['too long', 'a'.repeat(40)],
    ])('refuses a slug with %s', async (_name, slug) => {
      const res = await createListingRequest(t, alice.apiKey, {
        source: 'hosted',
        slug,
        ssh_public_key: keys.ed25519.publicKey,
      });
      expectError(res, 400, 'invalid_request');
    });

    it('refuses a slug the owner already uses, while another owner may use it', async () => {
      const first = await createHostedListing(t, alice.apiKey, keys.ed25519.publicKey);
      const again = await createListingRequest(t, alice.apiKey, {
        source: 'hosted',
        slug: first.slug,
        ssh_public_key: keys.other.publicKey,
      });
      expectError(again, 400, 'invalid_request');
      const bob = await registerCreator(t);
      await createHostedListing(t, bob.apiKey, keys.other.publicKey, { slug: first.slug });
    });

    it.each([
      ['a number price', { price_micro: 9000000 }],
      ['a decimal price', { price_micro: '9.5' }],
      ['a negative price', { price_micro: '-1' }],
      ['a price above 10^15', { price_micro: '1000000000000001' }],
      ['an unknown field', { colour: 'blue' }],
      ['an empty description', { description: '   ' }],
    ])('refuses %s', async (_name, extra) => {
      const res = await createListingRequest(t, alice.apiKey, {
        source: 'hosted',
        slug: uniqueSlug(),
        ssh_public_key: keys.ed25519.publicKey,
        ...extra,
      });
      expectError(res, 400, 'invalid_request');
    });

    it('keeps exact amounts up to 10^15 without rounding', async () => {
      const body = await createHostedListing(t, alice.apiKey, keys.ed25519.publicKey, {
        price_micro: '1000000000000000',
        update_price_micro: '999999999999999',
      });
      expect(body.pricing).toEqual({
        price_micro: '1000000000000000',
        update_price_micro: '999999999999999',
      });
    });

    it('allows three unpublished listings, then answers too_many_unpublished', async () => {
      for (let i = 0; i < 3; i += 1) await createHostedListing(t, alice.apiKey, keys.ed25519.publicKey);
      const res = await createListingRequest(t, alice.apiKey, {
        source: 'hosted',
        slug: uniqueSlug(),
        ssh_public_key: keys.ed25519.publicKey,
      });
      expectError(res, 409, 'too_many_unpublished');
      // Retiring a draft frees a place.
      const [first] = (await get('/api/listings')).json().listings;
      expect((await send('DELETE', `/api/listings/${first.id}`)).statusCode).toBe(200);
      await createHostedListing(t, alice.apiKey, keys.ed25519.publicKey);
    });

    it('enforces the cap under concurrent creation', async () => {
      const results = await Promise.all(
        Array.from({ length: 5 }, () =>
          createListingRequest(t, alice.apiKey, {
            source: 'hosted',
            slug: uniqueSlug(),
            ssh_public_key: keys.ed25519.publicKey,
          }),
        ),
      );
      expect(results.map((r) => r.statusCode).sort()).toEqual([201, 201, 201, 409, 409]);
    });

    it('refuses github listings with a clear invalid_request after validating them', async () => {
      const res = await createListingRequest(t, alice.apiKey, {
        source: 'github',
        slug: uniqueSlug(),
        installation_id: 1,
        repo: 'octo/private',
      });
      expectError(res, 400, 'invalid_request');
      expect(res.json().details.issues).toEqual([
        { field: 'source', reason: expect.stringContaining('hosted') },
      ]);
      const bad = await createListingRequest(t, alice.apiKey, {
        source: 'github',
        slug: uniqueSlug(),
        repo: 'x',
      });
      expectError(bad, 400, 'invalid_request');
      const unknown = await createListingRequest(t, alice.apiKey, { source: 'gitlab', slug: uniqueSlug() });
      expectError(unknown, 400, 'invalid_request');
    });

    it('requires a key with listings:write', async () => {
      const body = { source: 'hosted', slug: uniqueSlug(), ssh_public_key: keys.ed25519.publicKey };
      expectError(
        await t.app.inject({ method: 'POST', url: '/api/listings', payload: body }),
        401,
        'invalid_key',
      );
      expectError(await createListingRequest(t, 'r402_not-a-real-key', body), 401, 'invalid_key');
      const readOnly = await issueApiKey(t.ctx.database.db, {
        creatorId: alice.id,
        kind: 'agent',
        at: t.clock.now(),
        scopes: ['listings:read'],
      });
      expectError(await createListingRequest(t, readOnly.apiKey, body), 403, 'insufficient_scope');
    });
  });

  describe('GET /api/listings', () => {
    it('pages newest first with an opaque cursor and the pricing block on every entry', async () => {
      const bob = await registerCreator(t);
      await createHostedListing(t, bob.apiKey, keys.other.publicKey);
      const created: string[] = [];
      for (let i = 0; i < 3; i += 1) {
        created.push((await createHostedListing(t, alice.apiKey, keys.ed25519.publicKey)).id);
        t.clock.advance(1000);
      }
      const first = await get('/api/listings?limit=2');
      expect(first.statusCode, first.body).toBe(200);
      const page1 = first.json();
      expect(page1.listings.map((l: { id: string }) => l.id)).toEqual([created[2], created[1]]);
      expect(page1.listings[0].pricing).toEqual({ price_micro: null, update_price_micro: '0' });
      expect(page1.listings[0]).not.toHaveProperty('deploy_key_fingerprint');
      const page2 = (await get(`/api/listings?limit=2&cursor=${page1.next_cursor}`)).json();
      expect(page2.listings.map((l: { id: string }) => l.id)).toEqual([created[0]]);
      expect(page2.next_cursor).toBeNull();
      expect((await get('/api/listings')).json().listings).toHaveLength(3);
    });

    it.each(['0', '101', 'abc', '1.5', '-1', ''])('refuses limit=%s', async (limit) => {
      expectError(await get(`/api/listings?limit=${limit}`), 400, 'invalid_request');
    });

    it('refuses a cursor it did not issue', async () => {
      expectError(await get('/api/listings?cursor=nonsense'), 400, 'invalid_request');
      expectError(
        await get(`/api/listings?cursor=${Buffer.from('{"t":1}').toString('base64url')}`),
        400,
        'invalid_request',
      );
    });

    it('requires a key', async () => {
      expectError(await t.app.inject({ method: 'GET', url: '/api/listings' }), 401, 'invalid_key');
    });
  });

  describe('GET, PATCH, DELETE /api/listings/{id}', () => {
    it("answers 400 for a non-uuid id and 404 for unknown and other creators' ids", async () => {
      const listing = await createHostedListing(t, alice.apiKey, keys.ed25519.publicKey);
      const bob = await registerCreator(t);
      expectError(await get('/api/listings/not-a-uuid'), 400, 'invalid_request');
      expectError(await get('/api/listings/00000000-0000-4000-8000-000000000000'), 404, 'not_found');
      expectError(await get(`/api/listings/${listing.id}`, bob.apiKey), 404, 'not_found');
      expectError(
        await send('PATCH', `/api/listings/${listing.id}`, { description: 'x' }, bob.apiKey),
        404,
        'not_found',
      );
      expectError(
        await send('DELETE', `/api/listings/${listing.id}`, undefined, bob.apiKey),
        404,
        'not_found',
      );
      expectError(
        await send(
          'PUT',
          `/api/listings/${listing.id}/ssh-key`,
          { ssh_public_key: keys.other.publicKey },
          bob.apiKey,
        ),
        404,
        'not_found',
      );
      expectError(
        await send('POST', `/api/listings/${listing.id}/publish`, undefined, bob.apiKey),
        404,
        'not_found',
      );
      expect((await get(`/api/listings/${listing.id}`)).json().description).toBe('');
    });

    it('changes prices and text exactly; the listing keeps everything else', async () => {
      const listing = await createHostedListing(t, alice.apiKey, keys.ed25519.publicKey);
      const res = await send('PATCH', `/api/listings/${listing.id}`, {
        price_micro: '123456789012345',
        update_price_micro: '1',
        description: 'A toolkit',
        trigger_hint: 'When you need tools',
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({
        pricing: { price_micro: '123456789012345', update_price_micro: '1' },
        description: 'A toolkit',
        trigger_hint: 'When you need tools',
        status: 'draft',
      });
      const again = await send('PATCH', `/api/listings/${listing.id}`, { price_micro: '0' });
      expect(again.json()).toMatchObject({
        pricing: { price_micro: '0', update_price_micro: '1' },
        description: 'A toolkit',
      });
    });

    it.each([
      ['an empty body', {}],
      ['an unknown field', { slug: 'new-name' }],
      ['a number', { price_micro: 5 }],
      ['null', { price_micro: null }],
      ['a price above 10^15', { update_price_micro: '1000000000000001' }],
    ])('PATCH refuses %s', async (_name, body) => {
      const listing = await createHostedListing(t, alice.apiKey, keys.ed25519.publicKey);
      expectError(await send('PATCH', `/api/listings/${listing.id}`, body), 400, 'invalid_request');
    });

    it.each([
      ['a NUL', 'A toolkit\u0000', /control character U\+0000/],
      ['a lone surrogate', 'A toolkit \ud83d', /lone UTF-16 surrogate \(U\+D83D\)/],
      ['an escape sequence', 'A \u001b[31mred\u001b[0m toolkit', /control character U\+001B/],
      ['a right-to-left override', 'Safe \u202eexe.txt', /hidden Unicode: Bidirectional control/],
      ['smuggled tag characters', 'A toolkit\u{e0049}\u{e0047}\u{e004e}', /hidden Unicode: .*"IGN"/],
    ])(
      'refuses %s in description and trigger_hint, on creation and on PATCH, naming the field',
      async (_name, text, reason) => {
        const listing = await createHostedListing(t, alice.apiKey, keys.ed25519.publicKey);
        for (const field of ['description', 'trigger_hint']) {
          for (const res of [
            await send('PATCH', `/api/listings/${listing.id}`, { [field]: text }),
            await createListingRequest(t, alice.apiKey, {
              source: 'hosted',
              slug: uniqueSlug(),
              ssh_public_key: keys.ed25519.publicKey,
              [field]: text,
            }),
          ]) {
            expectError(res, 400, 'invalid_request');
            expect(res.json().details.issues).toEqual([{ field, reason: expect.stringMatching(reason) }]);
          }
        }
        expect((await get(`/api/listings/${listing.id}`)).json()).toMatchObject({
          description: '',
          trigger_hint: '',
        });
      },
    );

    it('keeps lines, tabs, right-to-left text, emoji and joiners exactly as sent', async () => {
      const listing = await createHostedListing(t, alice.apiKey, keys.ed25519.publicKey);
      const description = 'Tools\r\n\tfor שלום (\u200fRTL\u200f) and 👩‍👩‍👧 families\n';
      const trigger_hint = 'When the user says “zip it” 🗜️';
      const res = await send('PATCH', `/api/listings/${listing.id}`, { description, trigger_hint });
      expect(res.statusCode, res.body).toBe(200);
      expect((await get(`/api/listings/${listing.id}`)).json()).toMatchObject({ description, trigger_hint });
    });

    it('retires once: every later change answers 410 retired, GET still shows it', async () => {
      const listing = await createHostedListing(t, alice.apiKey, keys.ed25519.publicKey);
      const res = await send('DELETE', `/api/listings/${listing.id}`);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({
        id: listing.id,
        status: 'retired',
        retired_at: t.clock.now().toISOString(),
        repository: 'archived',
      });
      expectError(await send('DELETE', `/api/listings/${listing.id}`), 410, 'retired');
      expectError(await send('PATCH', `/api/listings/${listing.id}`, { description: 'x' }), 410, 'retired');
      expectError(
        await send('PUT', `/api/listings/${listing.id}/ssh-key`, { ssh_public_key: keys.other.publicKey }),
        410,
        'retired',
      );
      expectError(await send('POST', `/api/listings/${listing.id}/publish`), 410, 'retired');
      const view = await get(`/api/listings/${listing.id}`);
      expect(view.json()).toMatchObject({ status: 'retired', retired_at: t.clock.now().toISOString() });
      // The repository is kept, marked archived.
      const repo = path.join(t.dataDir, 'repos', alice.handle, `${listing.slug}.git`);
      const marker = await exec('git', ['--git-dir', repo, 'config', 'repo402.archived']);
      expect(marker.stdout.trim()).toBe('true');
    });

    it('retires a hosted listing whose repository an operator already removed', async () => {
      const listing = await createHostedListing(t, alice.apiKey, keys.ed25519.publicKey);
      await rm(path.join(t.dataDir, 'repos', alice.handle, `${listing.slug}.git`), { recursive: true });
      const res = await send('DELETE', `/api/listings/${listing.id}`);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ status: 'retired' });
      expectError(await send('DELETE', `/api/listings/${listing.id}`), 410, 'retired');
    });

    it('needs listings:read to read and listings:write to change', async () => {
      const listing = await createHostedListing(t, alice.apiKey, keys.ed25519.publicKey);
      const writeOnly = await issueApiKey(t.ctx.database.db, {
        creatorId: alice.id,
        kind: 'agent',
        at: t.clock.now(),
        scopes: ['listings:write'],
      });
      const readOnly = await issueApiKey(t.ctx.database.db, {
        creatorId: alice.id,
        kind: 'agent',
        at: t.clock.now(),
        scopes: ['listings:read'],
      });
      expectError(await get(`/api/listings/${listing.id}`, writeOnly.apiKey), 403, 'insufficient_scope');
      expectError(await get('/api/listings', writeOnly.apiKey), 403, 'insufficient_scope');
      expect((await get(`/api/listings/${listing.id}`, readOnly.apiKey)).statusCode).toBe(200);
      for (const [method, url, body] of [
        ['PATCH', `/api/listings/${listing.id}`, { description: 'x' }],
        ['DELETE', `/api/listings/${listing.id}`, undefined],
        ['PUT', `/api/listings/${listing.id}/ssh-key`, { ssh_public_key: keys.other.publicKey }],
        ['POST', `/api/listings/${listing.id}/publish`, undefined],
      ] as const) {
        expectError(await send(method, url, body, readOnly.apiKey), 403, 'insufficient_scope');
        expectError(await t.app.inject({ method, url, payload: body }), 401, 'invalid_key');
      }
    });
  });

  describe('PUT /api/listings/{id}/ssh-key', () => {
    it('replaces the deploy key', async () => {
      const listing = await createHostedListing(t, alice.apiKey, keys.ed25519.publicKey);
      const res = await send('PUT', `/api/listings/${listing.id}/ssh-key`, {
        ssh_public_key: keys.other.publicKey,
      });
      expect(res.statusCode, res.body).toBe(200);
      const printed = await exec('ssh-keygen', ['-lf', `${keys.other.file}.pub`]);
      expect(res.json().deploy_key_fingerprint).toBe(printed.stdout.split(' ')[1]);
      expect(res.json().deploy_key_fingerprint).not.toBe(listing.deploy_key_fingerprint);
    });

    it('refuses an invalid key and leaves the old one', async () => {
      const listing = await createHostedListing(t, alice.apiKey, keys.ed25519.publicKey);
      expectError(
        await send('PUT', `/api/listings/${listing.id}/ssh-key`, { ssh_public_key: keys.rsaShort.publicKey }),
        400,
        'invalid_request',
      );
      expectError(await send('PUT', `/api/listings/${listing.id}/ssh-key`, {}), 400, 'invalid_request');
      expect((await get(`/api/listings/${listing.id}`)).json().deploy_key_fingerprint).toBe(
        listing.deploy_key_fingerprint,
      );
    });
  });

  describe('POST /api/listings/{id}/publish without a release', () => {
    it('answers description_missing naming everything else missing too, then listing_not_ready naming every missing item', async () => {
      const listing = await createHostedListing(t, alice.apiKey, keys.ed25519.publicKey);
      const first = await send('POST', `/api/listings/${listing.id}/publish`);
      expectError(first, 409, 'description_missing');
      expect(first.json().details).toEqual({
        missing: ['description', 'trigger_hint'],
        blocking: ['passing_release', 'price'],
      });
      expect(first.json().message).toBe(
        'Set description and trigger_hint (PATCH /api/listings/{id}) before publishing; also missing: passing_release, price',
      );
      await send('PATCH', `/api/listings/${listing.id}`, {
        description: 'Tools',
        trigger_hint: 'When building',
      });
      const second = await send('POST', `/api/listings/${listing.id}/publish`);
      expectError(second, 409, 'listing_not_ready');
      expect(second.json().details).toEqual({ blocking: ['passing_release', 'price'] });
      await send('PATCH', `/api/listings/${listing.id}`, { price_micro: '0' });
      const third = await send('POST', `/api/listings/${listing.id}/publish`);
      expect(third.json().details).toEqual({ blocking: ['passing_release'] });
    });
  });
});
