import type { LookupAddress } from 'node:dns';
import path from 'node:path';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { setListingSuspended, setReleaseYanked } from '../../src/moderation/service.js';
import { advisoryRecheckJob, syncAdvisoriesNow } from '../../src/releases/advisory-jobs.js';
import { cutJob } from '../../src/releases/jobs.js';
import { findRelease } from '../../src/releases/store.js';
import type { HostLookup } from '../../src/webhooks/addresses.js';
import { announceWebhookEvents, enqueueWebhookEvent } from '../../src/webhooks/events.js';
import { webhookDeliveryJob, webhookFanOutJob } from '../../src/webhooks/jobs.js';
import { bearer, newWallet, registerCreator } from '../identity/support.js';
import { createHostedListing, type SshKey, sshKeygen } from '../listings/support.js';
import { buy, createPaymentsApp, fundedWallet, walletSignatureHeader } from '../purchases/support.js';
import { commitFile, eventually, testInspector, workRepo } from '../releases/support.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { BACKENDS } from '../support/db.js';
import { addFixtureReleases, publishedListingFixture } from '../support/listings.js';
import { OsvMirror, osvFixture } from '../support/osv-mirror.js';
import { freePort } from '../support/process.js';
import { type Receiver, startReceiver } from './support.js';

const MINIMIST_CRITICAL = osvFixture('GHSA-xvch-5gv4-984h');
/** A release resolving minimist 1.2.5, which GHSA-xvch-5gv4-984h (CRITICAL) affects. */
const LOCKED_FILES = {
  'README.md': '# argv tools\n\nParses arguments.\n',
  'package.json': JSON.stringify({
    name: 'argv-tools',
    version: '1.0.0',
    dependencies: { minimist: '^1.2.0' },
  }),
  'package-lock.json': JSON.stringify({
    name: 'argv-tools',
    version: '1.0.0',
    lockfileVersion: 3,
    requires: true,
    packages: {
      '': { name: 'argv-tools', version: '1.0.0', dependencies: { minimist: '^1.2.0' } },
      'node_modules/minimist': { version: '1.2.5' },
    },
  }),
};

let key: SshKey;
beforeAll(async () => {
  key = await sshKeygen('ed25519');
});

/** A resolver stand-in: each name answers what `table` says now (tests never resolve real names). */
function stubLookup(table: Record<string, string>): HostLookup {
  const lookup = (host: string, options: unknown, callback: unknown) => {
    const cb = (typeof options === 'function' ? options : callback) as (
      error: NodeJS.ErrnoException | null,
      address: string | LookupAddress[],
      family?: number,
    ) => void;
    const address = table[host];
    if (!address) {
      cb(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }), []);
      return;
    }
    const family = address.includes(':') ? 6 : 4;
    if (typeof options === 'object' && options !== null && (options as { all?: boolean }).all) {
      cb(null, [{ address, family }]);
    } else cb(null, address, family);
  };
  return lookup as unknown as HostLookup;
}

describe.each(BACKENDS)('signed webhooks on %s', (backend) => {
  let t: TestApp | undefined;
  const receivers: Receiver[] = [];
  afterEach(async () => {
    await t?.close();
    t = undefined;
    for (const receiver of receivers.splice(0)) await receiver.close();
  });
  const receiver = async (statuses?: number[]) => {
    const started = await startReceiver(statuses);
    receivers.push(started);
    return started;
  };

  it('a creator hears release.cut (and scan_failed) and a sale made with @x402/fetch; a holder hears release.published after a push, at the update price in force', async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const app = await createPaymentsApp({
      backend,
      env: { BASE_URL: base, WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true' },
      jobs: [cutJob, webhookFanOutJob, webhookDeliveryJob],
    });
    t = app;
    await app.app.listen({ port, host: '127.0.0.1' });
    app.ctx.inspectRelease = testInspector({ failing: ['1.2.0'] });
    const alice = await registerCreator(app);
    const listing = await createHostedListing(app, alice.apiKey, key.publicKey, {
      price_micro: '2000000',
      update_price_micro: '500000',
      description: 'A toolkit',
      trigger_hint: 'when you need tools',
    });

    const creatorHooks = await receiver();
    const subscribed = await app.app.inject({
      method: 'POST',
      url: '/api/creators/me/webhooks',
      headers: bearer(alice.apiKey),
      payload: { url: creatorHooks.url, events: ['sale', 'release.cut', 'release.scan_failed'] },
    });
    expect(subscribed.statusCode, subscribed.body).toBe(201);
    const creatorSubscription = subscribed.json();
    expect(creatorSubscription).toMatchObject({
      url: creatorHooks.url,
      events: ['release.cut', 'release.scan_failed', 'sale'],
      status: 'active',
      listing: null,
    });
    expect(creatorSubscription.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    creatorHooks.secret = creatorSubscription.secret;
    // The secret is shown once: the list never carries it.
    const listed = await app.app.inject({ url: '/api/creators/me/webhooks', headers: bearer(alice.apiKey) });
    expect(listed.json().subscriptions).toHaveLength(1);
    expect(listed.body).not.toContain(creatorSubscription.secret);

    const work = await workRepo();
    const bare = path.join(app.dataDir, 'repos', listing.owner, `${listing.slug}.git`);
    const cut = async (version: string) => {
      await commitFile(work, 'v.txt', `${version}\n`, `Version ${version}`);
      await work.git('tag', `v${version}`);
      await work.git('push', '-q', bare, 'main', '--tags');
      const synced = await app.app.inject({
        method: 'POST',
        url: `/api/listings/${listing.id}/sync`,
        headers: bearer(alice.apiKey),
        payload: { version },
      });
      expect(synced.statusCode, synced.body).toBe(202);
      await eventually(async () => {
        const row = await findRelease(app.ctx.database.db, listing.id, version);
        return row && row.verdict !== 'pending' ? row : undefined;
      });
    };
    await cut('1.0.0');
    const published = await app.app.inject({
      method: 'POST',
      url: `/api/listings/${listing.id}/publish`,
      headers: bearer(alice.apiKey),
    });
    expect(published.statusCode, published.body).toBe(200);
    const [firstCut] = await eventually(async () => {
      const events = creatorHooks.events('release.cut');
      return events.length > 0 ? events : undefined;
    });
    expect(firstCut!.data).toMatchObject({
      listing: { id: listing.id, owner: listing.owner, slug: listing.slug },
      version: '1.0.0',
      tag: 'v1.0.0',
      verdict: 'pass',
      attestation_url: `${base}/api/v/${listing.owner}/${listing.slug}/releases/1.0.0/attestation`,
    });
    const message = creatorHooks.received[0]!;
    expect(message.headers['webhook-id']).toMatch(/^msg_[0-9a-f-]{36}$/);
    expect(message.headers['webhook-timestamp']).toMatch(/^\d+$/);
    expect(message.headers['webhook-signature']).toMatch(/^v1,/);

    // A purchase by the reference client: the creator hears the sale.
    const buyer = await fundedWallet(app, 10_000_000n);
    const client = new x402Client()
      .register('eip155:*', new ExactEvmScheme(buyer))
      .setSpendControls({ maxAmountPerPayment: '$10' } as never);
    const bought = await wrapFetchWithPayment(
      fetch,
      client,
    )(`${base}/api/r/${listing.owner}/${listing.slug}`);
    expect(bought.status, await bought.clone().text()).toBe(200);
    const [sale] = await eventually(async () => {
      const events = creatorHooks.events('sale');
      return events.length > 0 ? events : undefined;
    });
    expect(sale!.data).toMatchObject({
      listing: { id: listing.id, owner: listing.owner, slug: listing.slug },
      version: '1.0.0',
      kind: 'new',
      buyer: buyer.address.toLowerCase(),
      amount_micro: '2000000',
      source: 'http',
      duplicate: false,
    });

    // The buyer subscribes with its wallet, for the listing it now holds.
    const holderHooks = await receiver();
    const holderSubscribed = await app.app.inject({
      method: 'POST',
      url: '/api/webhooks',
      headers: { 'x-wallet-signature': await walletSignatureHeader(app, buyer) },
      payload: {
        url: holderHooks.url,
        events: ['release.published', 'release.advisory'],
        listing: `${listing.owner}/${listing.slug}`,
      },
    });
    expect(holderSubscribed.statusCode, holderSubscribed.body).toBe(201);
    holderHooks.secret = holderSubscribed.json().secret;
    expect(holderSubscribed.json().listing).toBe(`${listing.owner}/${listing.slug}`);

    await cut('1.1.0');
    const [release] = await eventually(async () => {
      const events = holderHooks.events('release.published');
      return events.length > 0 ? events : undefined;
    });
    expect(release!.data).toMatchObject({
      listing: { owner: listing.owner, slug: listing.slug },
      version: '1.1.0',
      changelog: expect.stringContaining('Version 1.1.0'),
      price_micro: '2000000',
      update_price_micro: '500000',
      resource_url: `${base}/api/r/${listing.owner}/${listing.slug}`,
    });

    // A failing release: the creator hears the cut and the failure; holders hear nothing.
    await cut('1.2.0');
    const failed = await eventually(async () => {
      const events = creatorHooks.events('release.scan_failed');
      return events.length > 0 ? events : undefined;
    });
    expect(failed[0]!.data).toMatchObject({ version: '1.2.0', verdict: 'fail' });
    await eventually(async () =>
      creatorHooks.events('release.cut').some((event) => event.data.version === '1.2.0') ? true : undefined,
    );
    expect(holderHooks.events('release.published').map((event) => event.data.version)).toEqual(['1.1.0']);
    // Every message verified with its subscription's secret.
    expect(creatorHooks.received.every((received) => received.verified)).toBe(true);
    expect(holderHooks.received.every((received) => received.verified)).toBe(true);

    const log = await app.app.inject({
      url: `/api/creators/me/webhooks/${creatorSubscription.id}/deliveries`,
      headers: bearer(alice.apiKey),
    });
    expect(log.statusCode).toBe(200);
    const deliveries = log.json().deliveries as Array<{ type: string; state: string; attempts: number }>;
    expect(deliveries.map((delivery) => delivery.type).sort()).toEqual([
      'release.cut',
      'release.cut',
      'release.cut',
      'release.scan_failed',
      'sale',
    ]);
    expect(deliveries.every((delivery) => delivery.state === 'delivered' && delivery.attempts === 1)).toBe(
      true,
    );
    const holderLog = await app.app.inject({
      url: `/api/webhooks/${holderSubscribed.json().id}/deliveries`,
      headers: { 'x-wallet-signature': await walletSignatureHeader(app, buyer) },
    });
    expect(holderLog.statusCode).toBe(200);
    expect(holderLog.json().deliveries).toMatchObject([{ type: 'release.published', state: 'delivered' }]);
    // Three cuts and a purchase on a devnet chain: about 20 s alone, more on a busy machine.
  }, 120_000);

  it('a holder hears release.advisory when an advisory import affects the version it holds, with the fixed version', {
    timeout: 120_000,
  }, async () => {
    const mirror = await OsvMirror.start();
    try {
      const app = await createPaymentsApp({
        backend,
        env: { OSV_URL: mirror.url, WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true' },
        jobs: [advisoryRecheckJob, webhookFanOutJob, webhookDeliveryJob],
      });
      t = app;
      const f = await publishedListingFixture(app, { releases: [{ version: '1.0.0', files: LOCKED_FILES }] });
      const holder = await fundedWallet(app, 10_000_000n);
      expect((await buy(app, f, holder)).statusCode).toBe(200);
      // A later release drops the affected dependency: the one to move to.
      await addFixtureReleases(app, f, [
        { version: '1.1.0', files: { 'README.md': '# argv tools\n\nNo deps.\n' } },
      ]);
      // Another wallet that holds nothing of it hears nothing, even subscribed to every listing it holds.
      const bystander = newWallet();
      const hooks = await receiver();
      const others = await receiver();
      for (const [wallet, hook, listing] of [
        [holder, hooks, `${f.owner}/${f.slug}`],
        [bystander, others, undefined],
      ] as const) {
        const res = await app.app.inject({
          method: 'POST',
          url: '/api/webhooks',
          headers: { 'x-wallet-signature': await walletSignatureHeader(app, wallet) },
          payload: { url: hook.url, events: ['release.advisory'], ...(listing ? { listing } : {}) },
        });
        expect(res.statusCode, res.body).toBe(201);
        hook.secret = res.json().secret;
      }

      await mirror.publish('npm', [MINIMIST_CRITICAL]);
      await syncAdvisoriesNow(app.ctx);
      const [advisory] = await eventually(async () => {
        const events = hooks.events('release.advisory');
        return events.length > 0 ? events : undefined;
      });
      expect(advisory!.data).toMatchObject({
        listing: { id: f.listingId, owner: f.owner, slug: f.slug },
        version: '1.0.0',
        advisory_ids: ['GHSA-xvch-5gv4-984h'],
        fixed_version: '1.1.0',
        resource_url: `${app.config.baseUrl}/api/r/${f.owner}/${f.slug}`,
      });
      expect((advisory!.data.findings as unknown[]).length).toBeGreaterThan(0);
      // A second sync of the same data announces nothing again.
      await syncAdvisoriesNow(app.ctx);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(hooks.events('release.advisory')).toHaveLength(1);
      expect(others.received).toHaveLength(0);
    } finally {
      await mirror.close();
    }
  });

  it('the operator’s tools reach subscribers: the creator hears report.received and listing.suspended, a holder release.yanked with the version it may fetch free', async () => {
    const app = await createPaymentsApp({
      backend,
      env: { WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true' },
      jobs: [webhookFanOutJob, webhookDeliveryJob],
    });
    t = app;
    const f = await publishedListingFixture(app, { releases: [{ version: '1.0.0' }, { version: '1.1.0' }] });
    const name = `${f.owner}/${f.slug}`;
    const holder = await fundedWallet(app, 10_000_000n);
    expect((await buy(app, f, holder)).statusCode).toBe(200);
    const creatorHooks = await receiver();
    const holderHooks = await receiver();
    const subscribed = await app.app.inject({
      method: 'POST',
      url: '/api/creators/me/webhooks',
      headers: bearer(f.creator.apiKey),
      payload: { url: creatorHooks.url, events: ['report.received', 'listing.suspended'] },
    });
    expect(subscribed.statusCode, subscribed.body).toBe(201);
    creatorHooks.secret = subscribed.json().secret;
    const held = await app.app.inject({
      method: 'POST',
      url: '/api/webhooks',
      headers: { 'x-wallet-signature': await walletSignatureHeader(app, holder) },
      payload: { url: holderHooks.url, events: ['release.yanked'], listing: name },
    });
    expect(held.statusCode, held.body).toBe(201);
    holderHooks.secret = held.json().secret;

    const reported = await app.app.inject({
      method: 'POST',
      url: '/api/reports',
      payload: { listing: name, version: '1.1.0', category: 'malware', text: 'It mines coins' },
    });
    expect(reported.statusCode, reported.body).toBe(201);
    await setReleaseYanked(app.ctx, { listing: name, version: '1.1.0', reason: 'It mines coins' });
    await setListingSuspended(app.ctx, { listing: name, reason: 'Under review' });

    const listing = { id: f.listingId, owner: f.owner, slug: f.slug };
    const [yanked] = await eventually(async () => {
      const events = holderHooks.events('release.yanked');
      return events.length > 0 ? events : undefined;
    });
    expect(yanked!.data).toMatchObject({
      listing,
      version: '1.1.0',
      reason: 'It mines coins',
      free_version: '1.0.0',
      resource_url: `${app.config.baseUrl}/api/r/${name}`,
    });
    const creatorEvents = await eventually(async () =>
      creatorHooks.received.length >= 2 ? creatorHooks.received : undefined,
    );
    expect(creatorEvents.map((message) => message.verified?.type).sort()).toEqual([
      'listing.suspended',
      'report.received',
    ]);
    expect(creatorHooks.events('report.received')[0]!.data).toMatchObject({
      listing,
      version: '1.1.0',
      category: 'malware',
    });
    expect(creatorHooks.events('listing.suspended')[0]!.data).toMatchObject({
      listing,
      reason: 'Under review',
    });
  });

  it('retries a failing receiver with the configured back-off, then disables the subscription and says why', async () => {
    t = await createTestApp({
      backend,
      env: { WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true', WEBHOOK_RETRY_DELAYS_SECONDS: '1,1' },
      jobs: [webhookFanOutJob, webhookDeliveryJob],
    });
    const alice = await registerCreator(t);
    const hooks = await receiver([500, 503, 500]);
    const subscribed = await t.app.inject({
      method: 'POST',
      url: '/api/creators/me/webhooks',
      headers: bearer(alice.apiKey),
      payload: { url: hooks.url, events: ['release.cut'] },
    });
    hooks.secret = subscribed.json().secret;
    const id = subscribed.json().id as string;
    await enqueueWebhookEvent(
      t.ctx.database.db,
      { type: 'release.cut', creatorId: alice.id, data: { version: '1.0.0', verdict: 'pass' } },
      t.clock.now(),
    );
    await announceWebhookEvents(t.ctx);
    const app = t;
    const disabled = await eventually(async () => {
      const list = await app.app.inject({ url: '/api/creators/me/webhooks', headers: bearer(alice.apiKey) });
      const [subscription] = list.json().subscriptions;
      return subscription.status === 'disabled' ? subscription : undefined;
    });
    expect(hooks.received).toHaveLength(3);
    // The same message each time: one webhook-id, signed anew.
    expect(new Set(hooks.received.map((message) => message.headers['webhook-id'])).size).toBe(1);
    expect(hooks.received.every((message) => message.verified?.type === 'release.cut')).toBe(true);
    expect(disabled.disabled_reason).toContain('failed on all 3 attempts');
    expect(disabled.disabled_reason).toContain('HTTP 500');
    expect(disabled.consecutive_failures).toBe(3);
    const log = await t.app.inject({
      url: `/api/creators/me/webhooks/${id}/deliveries`,
      headers: bearer(alice.apiKey),
    });
    expect(log.json().deliveries).toMatchObject([
      { type: 'release.cut', state: 'failed', attempts: 3, last_status: 500, next_attempt_at: null },
    ]);
    // A disabled subscription hears nothing more.
    await enqueueWebhookEvent(
      t.ctx.database.db,
      { type: 'release.cut', creatorId: alice.id, data: { version: '1.1.0', verdict: 'pass' } },
      t.clock.now(),
    );
    await announceWebhookEvents(t.ctx);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(hooks.received).toHaveLength(3);
  });

  it('refuses loopback, private and link-local destinations, and a host that later resolves to one (stubbed resolver)', async () => {
    t = await createTestApp({
      backend,
      env: { WEBHOOK_RETRY_DELAYS_SECONDS: '1' },
      jobs: [webhookFanOutJob, webhookDeliveryJob],
    });
    const resolver: Record<string, string> = {
      'inward.example': '192.168.0.7',
      'hooks.example': '93.184.216.34',
    };
    t.ctx.webhookLookup = stubLookup(resolver);
    const alice = await registerCreator(t);
    const subscribe = (url: string) =>
      t!.app.inject({
        method: 'POST',
        url: '/api/creators/me/webhooks',
        headers: bearer(alice.apiKey),
        payload: { url, events: ['release.cut'] },
      });
    for (const url of [
      'http://127.0.0.1:8080/hooks',
      'http://10.1.2.3/hooks',
      'http://[::1]/hooks',
      'http://169.254.169.254/latest/meta-data',
      'https://inward.example/hooks',
      'https://nowhere.example/hooks',
    ]) {
      const res = await subscribe(url);
      expect(res.statusCode, url).toBe(400);
      expect(res.json(), url).toMatchObject({
        code: 'invalid_request',
        details: { issues: [{ field: 'url' }] },
      });
    }
    const holder = await t.app.inject({
      method: 'POST',
      url: '/api/webhooks',
      headers: {
        'x-wallet-signature': await walletSignatureHeader(
          t,
          (await import('../identity/support.js')).newWallet(),
        ),
      },
      payload: { url: 'http://127.0.0.1:9/hooks', events: ['release.published'] },
    });
    expect(holder.statusCode).toBe(400);

    // Public when subscribed; inward when delivered: the delivery is refused before any connection.
    const accepted = await subscribe('http://hooks.example/hooks');
    expect(accepted.statusCode, accepted.body).toBe(201);
    resolver['hooks.example'] = '10.0.0.8';
    await enqueueWebhookEvent(
      t.ctx.database.db,
      { type: 'release.cut', creatorId: alice.id, data: { version: '1.0.0', verdict: 'pass' } },
      t.clock.now(),
    );
    await announceWebhookEvents(t.ctx);
    const app = t;
    const disabled = await eventually(async () => {
      const [subscription] = (
        await app.app.inject({ url: '/api/creators/me/webhooks', headers: bearer(alice.apiKey) })
      ).json().subscriptions;
      return subscription.status === 'disabled' ? subscription : undefined;
    });
    expect(disabled.disabled_reason).toContain('refused: the host resolves to a loopback, private');
    const log = await t.app.inject({
      url: `/api/creators/me/webhooks/${accepted.json().id}/deliveries`,
      headers: bearer(alice.apiKey),
    });
    expect(log.json().deliveries).toMatchObject([{ state: 'failed', attempts: 2, last_status: null }]);
  });
});
