import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devnetFacilitator } from '../../src/devnet/facilitator.js';
import { newWallet } from '../identity/support.js';
import { createPaymentsApp, type PaymentsTestApp } from '../purchases/support.js';
import { type BaseStandIn, startBaseStandIn } from '../support/chain.js';
import { type FaultyFacilitator, startFaultyFacilitator } from '../support/faulty-facilitator.js';
import { freePort } from '../support/process.js';

/**
 * Issue 39: readiness names what this process cannot reach, while /api/health keeps SPEC's
 * meaning (our database only). Mainnet mode with a real S3 API server (s3rver), the reference
 * facilitator over HTTP and a chain behind JSON-RPC; each is stopped in turn, then the pause.
 */
describe('readiness', () => {
  let base: BaseStandIn;
  let facilitator: FaultyFacilitator;
  let s3: S3rver;
  let s3Dir: string;
  let t: PaymentsTestApp;

  beforeAll(async () => {
    base = await startBaseStandIn();
    facilitator = await startFaultyFacilitator(devnetFacilitator(base.chain));
    s3Dir = await mkdtemp(path.join(os.tmpdir(), 'repo402-s3-'));
    const s3Port = await freePort();
    s3 = new S3rver({
      address: '127.0.0.1',
      port: s3Port,
      directory: s3Dir,
      silent: true,
      configureBuckets: [{ name: 'artifacts' }],
    });
    await s3.run();
    t = await createPaymentsApp({
      env: {
        PAYMENTS_MODE: 'mainnet',
        FACILITATOR_URL: facilitator.url,
        BASE_RPC_URL: base.rpc.url,
        PLATFORM_PAYOUT_ADDRESS: newWallet().address,
        S3_BUCKET: 'artifacts',
        S3_ENDPOINT: `http://127.0.0.1:${s3Port}`,
        S3_ACCESS_KEY_ID: 'S3RVER',
        S3_SECRET_ACCESS_KEY: 'S3RVER',
        S3_FORCE_PATH_STYLE: 'true',
      },
    });
  });
  afterAll(async () => {
    await t?.close();
    await s3?.close().catch(() => {});
    await facilitator?.close().catch(() => {});
    await base?.close();
    await rm(s3Dir, { recursive: true, force: true });
  });

  const ready = () => t.app.inject({ url: '/api/ready' });
  const health = async () => {
    const res = await t.app.inject({ url: '/api/health' });
    expect(res.statusCode).toBe(200);
    return res.json().status;
  };

  it('is ready when every dependency answers, naming each', async () => {
    const res = await ready();
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.json()).toEqual({
      ready: true,
      paused: false,
      checks: { database: 'ok', blob_store: 'ok', repositories: 'ok', facilitator: 'ok', chain: 'ok' },
    });
  });

  it('names the blob store, then the facilitator, then the pause; health keeps its answer throughout', async () => {
    await s3.close();
    let res = await ready();
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({
      code: 'paused',
      message: 'Not ready: down: blob_store',
      details: {
        ready: false,
        paused: false,
        checks: { blob_store: 'down', facilitator: 'ok', database: 'ok' },
      },
    });
    expect(res.headers['retry-after']).toBe('5');
    expect(await health()).toBe('ok');

    await facilitator.close();
    res = await ready();
    expect(res.statusCode).toBe(503);
    expect(res.json().message).toBe('Not ready: down: blob_store, facilitator');
    expect(res.json().details.checks).toMatchObject({ blob_store: 'down', facilitator: 'down', chain: 'ok' });
    expect(await health()).toBe('ok');

    await t.ctx.pause.set(true);
    res = await ready();
    expect(res.statusCode).toBe(503);
    expect(res.json().message).toBe('Not ready: down: blob_store, facilitator; paused by the operator');
    expect(res.json().details.paused).toBe(true);
    expect(await health()).toBe('ok');
    // Every other route answers the pause.
    expect((await t.app.inject({ url: '/api/terms' })).json().code).toBe('paused');
    await t.ctx.pause.set(false);
  }, 30_000);
});
