import { afterEach, describe, expect, it } from 'vitest';
import { operations } from '../../src/operations.js';
import { bearer, expectError, freshIp } from '../identity/support.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { BACKENDS } from '../support/db.js';
import { publishedListingFixture } from '../support/listings.js';

// biome-ignore lint/suspicious/noExplicitAny: answers are asserted field by field
type Json = Record<string, any>;

async function operate(t: TestApp, name: keyof typeof operations, args: Record<string, unknown>) {
  const operation = operations[name];
  return operation.run(t.ctx, operation.args.parse(args) as never);
}

describe.each(BACKENDS)('POST /api/reports on %s', (backend) => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  const report = (app: TestApp, payload: unknown, remoteAddress = freshIp()) =>
    app.app.inject({ method: 'POST', url: '/api/reports', payload: payload as object, remoteAddress });

  it('records a report by owner/slug or by id, without an account; the creator is told; the operator lists and resolves it', {
    timeout: 60_000,
  }, async () => {
    t = await createTestApp({ backend });
    const f = await publishedListingFixture(t, { releases: [{ version: '1.0.0' }] });
    const name = `${f.owner}/${f.slug}`;

    const byName = await report(t, {
      listing: name,
      version: '1.0.0',
      category: 'secret_exposed',
      text: 'An AWS key in config.js',
    });
    expect(byName.statusCode, byName.body).toBe(201);
    expect(byName.headers['cache-control']).toBe('no-store');
    expect(byName.json()).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      listing: name,
      version: '1.0.0',
      category: 'secret_exposed',
      received_at: expect.any(String),
    });
    const byId = await report(t, {
      listing: f.listingId,
      category: 'copyright',
      text: 'This is my code.\nSee my repo.',
    });
    expect(byId.statusCode, byId.body).toBe(201);
    expect(byId.json()).not.toHaveProperty('version');

    const notices = (
      await t.app.inject({ url: '/api/creators/me/notices', headers: bearer(f.creator.apiKey) })
    ).json() as Json;
    expect(notices.notices.map((n: Json) => n.type)).toEqual(['report.received', 'report.received']);
    expect(notices.notices[0].text).toContain('a copyright claim');
    expect(notices.notices[1].text).toContain('version 1.0.0 for an exposed secret');

    const open = (await operate(t, 'reports.list', {})) as Json[];
    expect(open.map((r) => r.id)).toEqual([byId.json().id, byName.json().id]);
    expect(open[1]).toMatchObject({
      listing: name,
      category: 'secret_exposed',
      text: 'An AWS key in config.js',
      resolved_at: null,
    });
    await operate(t, 'reports.resolve', {
      id: byName.json().id,
      note: 'release yanked, key rotated by the creator',
    });
    expect(((await operate(t, 'reports.list', {})) as Json[]).map((r) => r.id)).toEqual([byId.json().id]);
    const all = (await operate(t, 'reports.list', { all: true })) as Json[];
    expect(all.find((r) => r.id === byName.json().id)).toMatchObject({
      resolution_note: 'release yanked, key rotated by the creator',
    });
    await expect(operate(t, 'reports.resolve', { id: byName.json().id, note: 'twice' })).rejects.toThrow(
      /No open report/,
    );
    const audit = (await operate(t, 'audit.list', {})) as Json[];
    expect(audit).toMatchObject([{ action: 'report.resolve', subject: byName.json().id }]);
    const told = (
      await t.app.inject({ url: '/api/creators/me/notices', headers: bearer(f.creator.apiKey) })
    ).json() as Json;
    expect(told.notices[0]).toMatchObject({ type: 'report.resolved' });
    expect(told.notices[0].text).toContain('key rotated');
  });

  it('refuses bad input with invalid_request naming the field, and unknown, draft and unknown-version listings with 404', {
    timeout: 60_000,
  }, async () => {
    t = await createTestApp({ backend });
    const f = await publishedListingFixture(t, { releases: [{ version: '1.0.0' }] });
    const draft = await publishedListingFixture(t, { status: 'draft', releases: [{ version: '1.0.0' }] });
    const name = `${f.owner}/${f.slug}`;
    const good = { listing: name, category: 'malware', text: 'It deletes files.' };
    const cases: Array<[unknown, string]> = [
      [{ ...good, category: 'spam' }, 'category'],
      [{ ...good, text: '' }, 'text'],
      [{ ...good, text: '   ' }, 'text'],
      [{ ...good, text: 'x'.repeat(4001) }, 'text'],
      [{ ...good, text: 'nul\u0000byte' }, 'text'],
      [{ ...good, listing: 'a/b\nc' }, 'listing'],
      [{ ...good, extra: true }, ''],
      [{ category: 'malware', text: 'no listing' }, 'listing'],
    ];
    for (const [payload, field] of cases) {
      const res = await report(t, payload);
      expectError(res, 400, 'invalid_request');
      if (field) expect(JSON.stringify(res.json().details.issues), JSON.stringify(payload)).toContain(field);
    }
    expectError(await report(t, 'not json at all'), 400, 'invalid_request');
    expectError(await report(t, { ...good, listing: 'nobody/nothing' }), 404, 'not_found');
    expectError(await report(t, { ...good, listing: `${draft.owner}/${draft.slug}` }), 404, 'not_found');
    expectError(await report(t, { ...good, listing: draft.listingId }), 404, 'not_found');
    expectError(await report(t, { ...good, version: '9.9.9' }), 404, 'not_found');
    expectError(await report(t, { ...good, version: '../../etc' }), 404, 'not_found');
    expect(await operate(t, 'reports.list', { all: true })).toEqual([]);
  });

  it('is rate-limited per address: the 11th report in an hour is 429 with retry-after; another address is not', {
    timeout: 60_000,
  }, async () => {
    t = await createTestApp({ backend });
    const f = await publishedListingFixture(t, { releases: [{ version: '1.0.0' }] });
    const payload = { listing: `${f.owner}/${f.slug}`, category: 'other', text: 'Spam?' };
    const ip = freshIp();
    for (let i = 0; i < 10; i += 1) expect((await report(t, payload, ip)).statusCode).toBe(201);
    const limited = await report(t, payload, ip);
    expectError(limited, 429, 'rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.json().retry_after_seconds).toBeGreaterThan(0);
    expect((await report(t, payload, freshIp())).statusCode).toBe(201);
    expect(((await operate(t, 'reports.list', {})) as Json[]).length).toBe(11);
  });
});
