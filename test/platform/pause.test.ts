import { afterEach, describe, expect, it } from 'vitest';
import { PauseSwitch } from '../../src/platform/limits/pause.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { BACKENDS } from '../support/db.js';

describe.each(BACKENDS)('the paused switch on %s', (backend) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  it('answers 503 paused on every route but health when PAUSED=true', async () => {
    t = await createTestApp({ backend, env: { PAUSED: 'true' } });
    for (const url of [
      '/',
      '/api/terms',
      '/api/openapi.json',
      '/.well-known/api-catalog',
      '/docs/errors',
      '/nope',
    ]) {
      const res = await t.app.inject({ url });
      expect(res.statusCode, url).toBe(503);
      expect(res.json(), url).toMatchObject({
        code: 'paused',
        docs_url: 'http://repo402.test/docs/errors#paused',
      });
      expect(res.headers['retry-after']).toBeTruthy();
    }
    expect((await t.app.inject({ url: '/api/health' })).statusCode).toBe(200);
  });

  it('is flipped through the database and seen by another process on refresh', async () => {
    t = await createTestApp({ backend });
    expect((await t.app.inject({ url: '/api/terms' })).statusCode).toBe(200);
    // Another process (the CLI, another API node) flips the switch in the shared database.
    const other = new PauseSwitch(t.database.db, false);
    await other.set(true);
    await t.ctx.pause.refresh();
    expect((await t.app.inject({ url: '/api/terms' })).statusCode).toBe(503);
    await other.set(false);
    await t.ctx.pause.refresh();
    expect((await t.app.inject({ url: '/api/terms' })).statusCode).toBe(200);
  });

  it('cannot be resumed from the database while PAUSED=true is configured', async () => {
    t = await createTestApp({ backend, env: { PAUSED: 'true' } });
    await t.ctx.pause.set(false);
    expect(t.ctx.pause.paused).toBe(true);
  });
});
