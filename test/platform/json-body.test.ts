import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { bearer, registerCreator } from '../identity/support.js';
import { createTestApp, type TestApp } from '../support/app.js';

describe('an empty body sent as application/json', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({
      extend: (app) => {
        app.post('/test/no-body', async () => ({ ok: true }));
        app.post('/test/body', { schema: { body: z.strictObject({ name: z.string() }) } }, async () => ({
          ok: true,
        }));
      },
    });
  });
  afterAll(async () => t.close());
  const json = { 'content-type': 'application/json' };

  it('is no body: a route that takes none answers as it does without the header', async () => {
    for (const payload of [undefined, '\r\n']) {
      const res = await t.app.inject({ method: 'POST', url: '/test/no-body', headers: json, payload });
      expect(res.statusCode).toBe(200);
    }
    // A creator's DELETE of a listing that is not theirs: SPEC.md's 404, not a 400 about the body.
    const creator = await registerCreator(t);
    const res = await t.app.inject({
      method: 'DELETE',
      url: `/api/listings/${randomUUID()}`,
      headers: { ...json, ...bearer(creator.apiKey) },
    });
    expect(res.statusCode, res.body).toBe(404);
    expect(res.json().code).toBe('not_found');
  });

  it('is still refused where a body is needed, and a malformed or poisoned body still is, saying which', async () => {
    const poisoned = 'a __proto__ or constructor.prototype key is refused';
    for (const [payload, reason] of [
      [undefined, undefined],
      ['{', 'not valid JSON'],
      ['{"__proto__":{"polluted":1}}', poisoned],
      ['{"constructor":{"prototype":{"polluted":1}}}', poisoned],
      ['\ufeff{"__proto__":{"polluted":1}}', poisoned],
    ] as const) {
      const res = await t.app.inject({ method: 'POST', url: '/test/body', headers: json, payload });
      expect(res.statusCode, String(payload)).toBe(400);
      expect(res.json().code).toBe('invalid_request');
      if (reason) expect(res.json().details.issues).toEqual([{ field: 'body', reason }]);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
