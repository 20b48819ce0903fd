import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { connectDatabase } from '../../src/db/connect.js';
import { ReadCache } from '../../src/platform/cache/read-cache.js';
import { createContext } from '../../src/runtime.js';
import { bearer } from '../identity/support.js';
import {
  addRelease,
  buyUrl,
  createPaymentsApp,
  type ListingFixture,
  type PaymentsTestApp,
  publishListing,
} from '../purchases/support.js';
import { BACKENDS } from '../support/db.js';

/**
 * The public read paths are served from caches (issue 18); a listing change must still be seen on
 * the next request in the process that made it, and within a second in every other process.
 */

describe('ReadCache', () => {
  it('loads a key once for every concurrent request', async () => {
    const cache = new ReadCache<{ n: number }>({ max: 10, ttlMs: 60_000 });
    let loads = 0;
    const load = async () => {
      loads++;
      await new Promise((resolve) => setTimeout(resolve, 10));
      return { n: loads };
    };
    const answers = await Promise.all(Array.from({ length: 50 }, () => cache.get('k', load)));
    expect(loads).toBe(1);
    expect(new Set(answers).size).toBe(1);
  });

  it('never stores a load that started before a drop, and the next request loads afresh', async () => {
    const cache = new ReadCache<{ v: string }>({ max: 10, ttlMs: 60_000 });
    let release!: () => void;
    const slow = cache.get('a/b', () => new Promise((resolve) => (release = () => resolve({ v: 'old' }))));
    cache.dropListing({ owner: 'a', slug: 'b' });
    const fresh = cache.get('a/b', async () => ({ v: 'new' }));
    release();
    expect((await slow).v).toBe('old');
    expect((await fresh).v).toBe('new');
    expect((await cache.get('a/b', async () => ({ v: 'newer' }))).v).toBe('new');
  });

  it('drops the keys of one listing, the ones after it, or everything', async () => {
    const cache = new ReadCache<{ v: number }>({ max: 10, ttlMs: 60_000 });
    for (const key of ['a/b', 'a/b\nhttp', 'a/bc', 'c/d']) await cache.get(key, async () => ({ v: 1 }));
    cache.dropListing({ owner: 'a', slug: 'b' });
    const reread = async (key: string) => (await cache.get(key, async () => ({ v: 2 }))).v;
    expect([
      await reread('a/b'),
      await reread('a/b\nhttp'),
      await reread('a/bc'),
      await reread('c/d'),
    ]).toEqual([2, 2, 1, 1]);
    cache.dropListing('all');
    expect(await cache.get('c/d', async () => ({ v: 3 }))).toEqual({ v: 3 });
  });

  it('keeps nothing longer than its lifetime, nor a failed load', async () => {
    const cache = new ReadCache<{ v: number }>({ max: 10, ttlMs: 30 });
    await expect(cache.get('k', async () => Promise.reject(new Error('not found')))).rejects.toThrow();
    expect(await cache.get('k', async () => ({ v: 1 }))).toEqual({ v: 1 });
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(await cache.get('k', async () => ({ v: 2 }))).toEqual({ v: 2 });
  });
});

/** What every cached public read says about the listing's price and releases. */
async function publicReads(t: Pick<PaymentsTestApp, 'app'>, fixture: ListingFixture) {
  const get = (url: string) => t.app.inject({ url });
  const path = `${fixture.owner}/${fixture.slug}`;
  const offer = await get(buyUrl(fixture));
  const status = await get(`/api/v/${path}`);
  const label = await get(`/api/label/${path}`);
  const page = await get(`/${path}`);
  const log = await get(`/api/v/${path}/releases`);
  const discovery = await get('/.well-known/x402');
  const listed = (
    discovery.json().items as { accepts: { amount: string }[]; metadata: { channel: string } }[]
  ).find((item) => item.metadata.channel === path);
  return {
    offer: offer.statusCode === 402 ? offer.json().accepts[0].amount : offer.statusCode,
    status: status.statusCode === 200 ? status.json().price_micro : status.statusCode,
    label: label.statusCode === 200 ? label.json().price_micro : label.statusCode,
    page: page.body.match(/\$[0-9.]+/)?.[0],
    versions: log.statusCode === 200 ? log.json().releases.map((r: { version: string }) => r.version) : [],
    discovery: listed?.accepts[0]?.amount,
  };
}

function patchListing(t: Pick<PaymentsTestApp, 'app'>, fixture: ListingFixture, body: object) {
  return t.app.inject({
    method: 'PATCH',
    url: `/api/listings/${fixture.listingId}`,
    headers: bearer(fixture.creator.apiKey),
    payload: body,
  });
}

describe.each(BACKENDS)('listing changes reach the cached public reads on %s', (backend) => {
  let t: PaymentsTestApp;
  beforeAll(async () => {
    t = await createPaymentsApp({ backend });
  });
  afterAll(() => t?.close());

  it('shows a price change, a new release and a retirement on the very next request', async () => {
    const fixture = await publishListing(t, { priceMicro: 2_000_000n, slug: 'cached-tool' });
    expect(await publicReads(t, fixture)).toEqual({
      offer: '2000000',
      status: '2000000',
      label: '2000000',
      page: '$2.00',
      versions: ['1.0.0'],
      discovery: '2000000',
    });

    // A shared cache must key the status by the wallet header; the CORS answer is the same for every origin.
    const anonymous = await t.app.inject({
      url: `/api/v/${fixture.owner}/${fixture.slug}`,
      headers: { origin: 'https://agent.example' },
    });
    expect(String(anonymous.headers.vary).split(/,\s*/)).toContain('X-Wallet-Signature');
    expect(anonymous.headers['access-control-allow-origin']).toBe('*');

    expect((await patchListing(t, fixture, { price_micro: '3500000' })).statusCode).toBe(200);
    expect(await publicReads(t, fixture)).toMatchObject({
      offer: '3500000',
      status: '3500000',
      label: '3500000',
      page: '$3.50',
      discovery: '3500000',
    });

    await addRelease(t, fixture, '1.1.0');
    const afterRelease = await publicReads(t, fixture);
    expect(afterRelease.versions).toEqual(['1.1.0', '1.0.0']);
    expect((await t.app.inject({ url: `/api/v/${fixture.owner}/${fixture.slug}` })).json().version).toBe(
      '1.1.0',
    );

    const retire = await t.app.inject({
      method: 'DELETE',
      url: `/api/listings/${fixture.listingId}`,
      headers: bearer(fixture.creator.apiKey),
    });
    expect(retire.statusCode).toBe(200);
    expect((await t.app.inject({ url: buyUrl(fixture) })).statusCode).toBe(410);
    expect((await t.app.inject({ url: `/api/v/${fixture.owner}/${fixture.slug}` })).json().for_sale).toBe(
      false,
    );
  });

  it('quotes a 402 that is current: its quote is the one the payment is checked against', async () => {
    const fixture = await publishListing(t, { priceMicro: 1_000_000n, slug: 'quoted-tool' });
    const first = (await t.app.inject({ url: buyUrl(fixture) })).json();
    await patchListing(t, fixture, { price_micro: '1250000' });
    const second = (await t.app.inject({ url: buyUrl(fixture) })).json();
    expect(second.accepts[0].amount).toBe('1250000');
    expect(second.extra.quote_id).not.toBe(first.extra.quote_id);
    // A quote states its lifetime; a shared one has (nearly) all of its five minutes left.
    const validBefore = Date.parse(second.extra.valid_before);
    expect(validBefore - t.clock.now().getTime()).toBeGreaterThan(295_000);
  });
});

describe.runIf(BACKENDS.includes('postgres'))('listing changes across processes on PostgreSQL', () => {
  let a: PaymentsTestApp;
  let b: { app: PaymentsTestApp['app']; ctx: PaymentsTestApp['ctx']; close(): Promise<void> };
  beforeAll(async () => {
    a = await createPaymentsApp({ backend: 'postgres' });
    // A second application on the same database, with its own caches and its own listening
    // connection: nothing is shared with the first but PostgreSQL, as between two processes.
    const database = await connectDatabase({ kind: 'postgres', url: a.database.url!, poolSize: 2 });
    const runtime = await createContext(a.config, {
      database,
      appSecret: Buffer.alloc(32, 7),
      clock: a.clock,
    });
    const app = await buildApp(runtime.ctx);
    await app.ready();
    b = {
      app,
      ctx: runtime.ctx,
      async close() {
        await app.close();
        await runtime.close();
      },
    };
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('a change made in one process reaches the other as a notice, and its next request serves it', async () => {
    const fixture = await publishListing(a, { priceMicro: 2_000_000n, slug: 'shared-tool' });
    expect(await publicReads(b, fixture)).toMatchObject({
      offer: '2000000',
      status: '2000000',
      page: '$2.00',
    });
    const heard = new Promise<unknown>((resolve) => {
      const stop = b.ctx.listingEvents.on((change) => {
        if (change !== 'all' && change.slug === fixture.slug) {
          stop();
          resolve(change);
        }
      });
    });
    expect((await patchListing(a, fixture, { price_micro: '4000000' })).statusCode).toBe(200);
    expect(await heard).toEqual({ owner: fixture.owner, slug: fixture.slug });
    expect(await publicReads(b, fixture)).toMatchObject({
      offer: '4000000',
      status: '4000000',
      label: '4000000',
      page: '$4.00',
    });
  });
});
