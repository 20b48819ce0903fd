import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TERMS_VERSION } from '../../src/identity/terms.js';
import {
  bearer,
  newWallet,
  postCreator,
  type RegisteredCreator,
  registerCreator,
  registrationBody,
  signedChallenge,
} from '../identity/support.js';
import { type SshKey, sshKeygen, uniqueSlug } from '../listings/support.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { BACKENDS } from '../support/db.js';

/**
 * Issue 13, item 7: every text field of every request body (and every string query parameter)
 * takes arbitrary Unicode without a server fault. A value the database cannot store as sent (NUL,
 * a lone surrogate) or a control character is `400 invalid_request` naming the field; a value
 * that is accepted reads back exactly as sent.
 */

const SEED = 13;
const RUNS = 20;
/** Accepted listing creations provision a repository each; the PATCH cases cover the same fields more often. */
const CREATION_RUNS = 8;

/** Code points the rule is about, and some that must pass (accents, emoji, Hebrew, joiners). */
const PointedChar = fc.oneof(
  fc.constantFrom(
    '\u0000',
    '\u0007',
    '\u001b',
    '\u007f',
    '\u0085',
    '\u009f',
    '\t',
    '\n',
    '\r',
    '\u2028',
    '\u202e',
    '\u2066',
    '\u200b',
    '\u200d',
    '\ufeff',
    '\ufe0f',
    '\u{e0041}',
    'é',
    '😀',
    'א',
    ' ',
  ),
  fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code)),
);

const ArbitraryText = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  {
    weight: 3,
    arbitrary: fc.string({
      unit: fc.oneof(PointedChar, fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 })),
      maxLength: 24,
    }),
  },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 60 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '\u0000',
      'a\u0000b',
      '\ud800',
      'x\udc00y',
      'invoice\u202etxt.exe',
      'x'.repeat(6000),
      '😀'.repeat(3000),
      'שלום עולם',
      '👩‍👩‍👧 family',
    ),
  },
);

/** Refused in every text field: a control character other than TAB, LF and CR, or (in bodies) no UTF-8 form. */
const CONTROL = /[^\P{Cc}\t\n\r]/u;
const LONE_SURROGATE = /\p{Cs}/u;

type Response = LightMyRequestResponse;

interface FieldCase {
  name: string;
  /** The `details.issues[].field` a refusal names. */
  field: string;
  send(value: string): Promise<Response>;
  /** Other answers the route gives a well-formed value it does not take (a wrong signature, a stale terms version…). */
  alsoAnswers?: string[];
  /** Checks an accepted value reads back as sent. */
  readBack?(value: string, res: Response): Promise<void>;
  /** Query parameters: what the server decodes from a lone surrogate's bytes is not the surrogate. */
  query?: boolean;
  arbitrary?: fc.Arbitrary<string>;
  runs?: number;
}

/** A query-string value, with lone surrogates sent as the bytes WTF-8 would give them. */
function queryValue(value: string): string {
  let out = '';
  for (const char of value) {
    const code = char.codePointAt(0)!;
    if (code >= 0xd800 && code <= 0xdfff) {
      out += [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)]
        .map((byte) => `%${byte.toString(16).toUpperCase()}`)
        .join('');
    } else {
      out += encodeURIComponent(char);
    }
  }
  return out;
}

async function checkField(c: FieldCase): Promise<void> {
  await fc.assert(
    fc.asyncProperty(c.arbitrary ?? ArbitraryText, async (value) => {
      const res = await c.send(value);
      const label = `${c.name} with ${JSON.stringify(value).slice(0, 80)}: ${res.body.slice(0, 300)}`;
      expect(res.statusCode, label).toBeLessThan(500);
      const unstorable = CONTROL.test(value) || (!c.query && LONE_SURROGATE.test(value));
      if (res.statusCode < 300) {
        expect(unstorable, label).toBe(false);
        await c.readBack?.(value, res);
        return;
      }
      const body = res.json() as { code: string; details?: { issues?: { field: string; reason: string }[] } };
      if (unstorable) {
        expect(body.code, label).toBe('invalid_request');
        expect(res.statusCode, label).toBe(400);
      }
      if (body.code === 'invalid_request') {
        const issues = body.details?.issues ?? [];
        // A value too long for its route's whole body is refused by the body limit, unread.
        const overLimit = issues.some(
          (issue) => issue.field === 'body' && /larger than this route's limit/.test(issue.reason),
        );
        if (!overLimit)
          expect(
            issues.map((issue) => issue.field),
            label,
          ).toContain(c.field);
      } else {
        expect(c.alsoAnswers ?? [], label).toContain(body.code);
      }
    }),
    { seed: SEED, numRuns: c.runs ?? RUNS },
  );
}

const ADDRESS = '0x0000000000000000000000000000000000000001';
const REF_LIKE = fc.string({
  unit: fc.constantFrom(...'main.v1.2~^/-_0aZ'.split('')),
  minLength: 1,
  maxLength: 12,
});

describe.each(BACKENDS)('text fields on %s', (backend) => {
  let t: TestApp;
  let alice: RegisteredCreator;
  let key: SshKey;
  let listingId: string;
  beforeAll(async () => {
    t = await createTestApp({
      backend,
      env: { RATE_LIMIT_CREATOR: '100000/60', RATE_LIMIT_AUTH: '100000/60' },
    });
    alice = await registerCreator(t);
    key = await sshKeygen();
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/listings',
      headers: bearer(alice.apiKey),
      payload: { source: 'hosted', slug: uniqueSlug(), ssh_public_key: key.publicKey },
    });
    expect(res.statusCode, res.body).toBe(201);
    listingId = res.json().id;
  });
  afterAll(async () => t.close());

  const inject = (method: 'GET' | 'POST' | 'PATCH' | 'PUT', url: string, payload?: object, apiKey?: string) =>
    t.app.inject({ method, url, payload, headers: apiKey ? bearer(apiKey) : {} });

  /** The listing as GET /api/listings/{id} shows it. */
  const listing = async (id: string) =>
    (await inject('GET', `/api/listings/${id}`, undefined, alice.apiKey)).json();

  const createListing = (fields: Record<string, unknown>) =>
    inject(
      'POST',
      '/api/listings',
      { source: 'hosted', slug: uniqueSlug(), ssh_public_key: key.publicKey, ...fields },
      alice.apiKey,
    );

  /** Retires a created listing, so the limit on drafts never bites. */
  const retire = async (res: Response) => {
    const retired = await t.app.inject({
      method: 'DELETE',
      url: `/api/listings/${res.json().id}`,
      headers: bearer(alice.apiKey),
    });
    expect(retired.statusCode).toBe(200);
  };

  const createdReadsBack = (field: string) => async (value: string, res: Response) => {
    const stored = (await listing(res.json().id))[field];
    await retire(res);
    expect(res.json()[field]).toBe(value);
    expect(stored).toBe(value);
  };

  const patchedReadsBack = (field: string) => async (value: string, res: Response) => {
    expect(res.json()[field]).toBe(value);
    expect((await listing(listingId))[field]).toBe(value);
  };

  const register = async (overrides: Record<string, unknown>) =>
    postCreator(t, { ...(await registrationBody(t, newWallet())), ...overrides });

  const patchMe = async (fields: Record<string, unknown>) =>
    inject(
      'PATCH',
      '/api/creators/me',
      { step_up: await signedChallenge(t, alice.wallet, 'step_up'), ...fields },
      alice.apiKey,
    );

  const cases: FieldCase[] = [
    // POST /api/creators
    {
      name: 'registration handle',
      field: 'handle',
      send: (value) => register({ handle: value }),
      readBack: async (value, res) => expect(res.json().handle).toBe(value),
    },
    {
      name: 'registration payout_address',
      field: 'payout_address',
      send: (value) => register({ payout_address: value }),
      alsoAnswers: ['payout_address_unverified'],
    },
    {
      name: 'registration accepted_terms_version',
      field: 'accepted_terms_version',
      send: (value) => register({ accepted_terms_version: value }),
      alsoAnswers: ['terms_version_stale'],
      readBack: async (value, res) => expect(res.json().accepted_terms_version).toBe(value),
    },
    {
      name: 'registration invite_code',
      field: 'invite_code',
      send: (value) => register({ invite_code: value }),
      alsoAnswers: ['invite_required'],
    },
    {
      name: 'registration abuse_contact',
      field: 'abuse_contact',
      send: (value) => register({ abuse_contact: value }),
      readBack: async (value, res) => expect(res.json().abuse_contact).toBe(value),
    },
    {
      name: 'registration address_proof.nonce',
      field: 'address_proof.nonce',
      send: (value) => register({ address_proof: { nonce: value, signature: '0x00' } }),
      alsoAnswers: ['payout_address_unverified'],
    },
    {
      name: 'registration address_proof.signature',
      field: 'address_proof.signature',
      send: async (value) => {
        const body = await registrationBody(t, newWallet());
        return postCreator(t, {
          ...body,
          address_proof: { nonce: body.address_proof!.nonce, signature: value },
        });
      },
      alsoAnswers: ['payout_address_unverified'],
    },
    // PATCH /api/creators/me
    {
      name: 'creator update abuse_contact',
      field: 'abuse_contact',
      send: (value) => patchMe({ abuse_contact: value }),
      readBack: async (value, res) =>
        expect(res.json().pending_changes).toContainEqual(
          expect.objectContaining({ field: 'abuse_contact', value }),
        ),
    },
    {
      name: 'creator update payout_address',
      field: 'payout_address',
      send: (value) => patchMe({ payout_address: value }),
      alsoAnswers: ['step_up_required', 'payout_address_unverified'],
    },
    {
      name: 'creator update step_up.nonce',
      field: 'step_up.nonce',
      send: (value) =>
        inject(
          'PATCH',
          '/api/creators/me',
          { abuse_contact: 'new@example.com', step_up: { nonce: value, signature: '0x00' } },
          alice.apiKey,
        ),
      alsoAnswers: ['step_up_required', 'invalid_signature'],
    },
    {
      name: 'creator update step_up.signature',
      field: 'step_up.signature',
      send: async (value) => {
        const stepUp = await signedChallenge(t, alice.wallet, 'step_up');
        return inject(
          'PATCH',
          '/api/creators/me',
          { abuse_contact: 'new@example.com', step_up: { nonce: stepUp.nonce, signature: value } },
          alice.apiKey,
        );
      },
      alsoAnswers: ['step_up_required', 'invalid_signature'],
    },
    // Key rotation and web sessions
    ...(['rotate-key', 'sessions'] as const).flatMap((route): FieldCase[] =>
      (['address', 'nonce', 'signature'] as const).map((field) => ({
        name: `${route} ${field}`,
        field,
        send: (value) =>
          inject('POST', `/api/auth/${route}`, {
            address: ADDRESS,
            nonce: 'a'.repeat(32),
            signature: '0x00',
            [field]: value,
          }),
        alsoAnswers: ['invalid_signature', 'not_found'],
      })),
    ),
    // GET /api/auth/challenge
    ...(['address', 'purpose', 'new_payout_address'] as const).map(
      (field): FieldCase => ({
        name: `challenge query ${field}`,
        field,
        query: true,
        send: (value) => {
          const params: Record<string, string> = { address: ADDRESS, purpose: 'step_up', [field]: value };
          const query = Object.entries(params)
            .map(([name, param]) => `${name}=${queryValue(param)}`)
            .join('&');
          return inject('GET', `/api/auth/challenge?${query}`);
        },
      }),
    ),
    // POST /api/listings
    {
      name: 'listing creation description',
      field: 'description',
      runs: CREATION_RUNS,
      send: (value) => createListing({ description: value }),
      readBack: createdReadsBack('description'),
    },
    {
      name: 'listing creation trigger_hint',
      field: 'trigger_hint',
      runs: CREATION_RUNS,
      send: (value) => createListing({ trigger_hint: value }),
      readBack: createdReadsBack('trigger_hint'),
    },
    {
      name: 'listing creation slug',
      field: 'slug',
      runs: CREATION_RUNS,
      send: (value) => createListing({ slug: value }),
      readBack: createdReadsBack('slug'),
    },
    {
      name: 'listing creation ssh_public_key',
      field: 'ssh_public_key',
      send: (value) => createListing({ ssh_public_key: value }),
    },
    {
      name: 'listing creation price_micro',
      field: 'price_micro',
      send: (value) => createListing({ price_micro: value }),
      readBack: async (value, res) => {
        await retire(res);
        expect(res.json().pricing.price_micro).toBe(value);
      },
    },
    {
      name: 'listing creation repo (github)',
      field: 'repo',
      send: (value) =>
        inject(
          'POST',
          '/api/listings',
          { source: 'github', slug: uniqueSlug(), installation_id: 1, repo: value },
          alice.apiKey,
        ),
      // This server offers no GitHub listings: a well-formed one is refused on `source`.
      alsoAnswers: [],
    },
    // PATCH /api/listings/{id}
    ...(['description', 'trigger_hint'] as const).map(
      (field): FieldCase => ({
        name: `listing update ${field}`,
        field,
        send: (value) => inject('PATCH', `/api/listings/${listingId}`, { [field]: value }, alice.apiKey),
        readBack: patchedReadsBack(field),
      }),
    ),
    ...(['price_micro', 'update_price_micro'] as const).map(
      (field): FieldCase => ({
        name: `listing update ${field}`,
        field,
        send: (value) => inject('PATCH', `/api/listings/${listingId}`, { [field]: value }, alice.apiKey),
        readBack: async (value, res) => expect(res.json().pricing[field]).toBe(value),
      }),
    ),
    // PUT /api/listings/{id}/ssh-key: arbitrary text, and arbitrary text as a valid key's comment
    {
      name: 'deploy key',
      field: 'ssh_public_key',
      send: (value) =>
        inject('PUT', `/api/listings/${listingId}/ssh-key`, { ssh_public_key: value }, alice.apiKey),
    },
    {
      name: 'deploy key comment',
      field: 'ssh_public_key',
      send: (value) =>
        inject(
          'PUT',
          `/api/listings/${listingId}/ssh-key`,
          { ssh_public_key: `${key.publicKey} ${value}` },
          alice.apiKey,
        ),
    },
    // POST /api/listings/{id}/licence and /sync
    {
      name: 'licence spdx',
      field: 'spdx',
      send: (value) => inject('POST', `/api/listings/${listingId}/licence`, { spdx: value }, alice.apiKey),
    },
    ...(['ref', 'version'] as const).flatMap((field): FieldCase[] =>
      [ArbitraryText, REF_LIKE].map((arbitrary) => ({
        name: `sync ${field} (${arbitrary === REF_LIKE ? 'ref-like' : 'any'} text)`,
        field,
        arbitrary,
        send: (value) =>
          inject(
            'POST',
            `/api/listings/${listingId}/sync`,
            field === 'ref' ? { ref: value, version: '1.0.0' } : { version: value },
            alice.apiKey,
          ),
      })),
    ),
    // GET /api/listings/{id}/releases
    {
      name: 'listing releases query cursor',
      field: 'cursor',
      query: true,
      send: (value) =>
        inject(
          'GET',
          `/api/listings/${listingId}/releases?cursor=${queryValue(value)}`,
          undefined,
          alice.apiKey,
        ),
    },
    // GET /api/listings
    ...(['cursor', 'limit'] as const).map(
      (field): FieldCase => ({
        name: `listing list query ${field}`,
        field,
        query: true,
        send: (value) =>
          inject('GET', `/api/listings?${field}=${queryValue(value)}`, undefined, alice.apiKey),
      }),
    ),
    // The creator's sales, ledger and payouts
    ...(
      [
        ['/api/creators/me/sales', 'cursor'],
        ['/api/creators/me/sales', 'limit'],
        ['/api/creators/me/sales', 'listing_id'],
        ['/api/creators/me/sales/daily', 'days'],
        ['/api/creators/me/ledger', 'cursor'],
        ['/api/creators/me/ledger', 'limit'],
        ['/api/creators/me/payouts', 'cursor'],
        ['/api/creators/me/payouts', 'limit'],
      ] as const
    ).map(
      ([path, field]): FieldCase => ({
        name: `${path} query ${field}`,
        field,
        query: true,
        send: (value) => inject('GET', `${path}?${field}=${queryValue(value)}`, undefined, alice.apiKey),
      }),
    ),
  ];

  it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    await checkField(c);
  });

  it('a registration with a NUL or lone surrogate in its terms version is 400, not a stale version', async () => {
    for (const value of [`${TERMS_VERSION}\u0000`, `${TERMS_VERSION}\ud800`]) {
      const res = await register({ accepted_terms_version: value });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().details.issues).toContainEqual({
        field: 'accepted_terms_version',
        reason: expect.stringMatching(/control character|lone UTF-16 surrogate/),
      });
    }
  });
});
