import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { BACKENDS } from '../support/db.js';
import { PACKAGE_VERSION } from '../support/process.js';

describe.each(BACKENDS)('GET /api/health on %s', (backend) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  it('answers ok with the database check, never cached', async () => {
    t = await createTestApp({ backend });
    const res = await t.app.inject({ method: 'GET', url: '/api/health' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['x-request-id']).toBeTruthy();
    expect(res.headers['repo402-version']).toBe(PACKAGE_VERSION);
    const body = res.json();
    expect(body).toEqual({
      status: 'ok',
      checks: { database: 'ok' },
      latency_ms: expect.any(Number),
      time: t.clock.now().toISOString(),
    });
  });

  it('answers degraded when the database does not answer', async () => {
    t = await createTestApp({ backend });
    await t.database.close();
    const res = await t.app.inject({ method: 'GET', url: '/api/health' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'degraded', checks: { database: 'down' } });
  });

  it('stays up while paused', async () => {
    t = await createTestApp({ backend, env: { PAUSED: 'true' } });
    expect((await t.app.inject({ method: 'GET', url: '/api/health' })).statusCode).toBe(200);
  });
});
