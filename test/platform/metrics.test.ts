import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SshServer, startSshServer } from '../../src/git/ssh-server.js';
import { startMetricsListener } from '../../src/platform/metrics/exposition.js';
import { cutJob } from '../../src/releases/jobs.js';
import { hostedRepoAccess } from '../../src/releases/ssh-access.js';
import { findRelease } from '../../src/releases/store.js';
import { type SshKey, sshKeygen } from '../listings/support.js';
import {
  buy,
  createPaymentsApp,
  fundedWallet,
  type PaymentsTestApp,
  publishListing,
} from '../purchases/support.js';
import { eventually, gitOverSsh, taggedHostedListing, testInspector } from '../releases/support.js';
import { createTestApp } from '../support/app.js';
import { Scrape } from '../support/prometheus.js';

const TOKEN = 'metrics-token-0123456789abcdef0123456789';

/**
 * Issue 39: an operator watches the service. `/metrics` (Prometheus text format, read here by a
 * parser of that format) moves by exactly what happened: a purchase, a refused purchase, a cut and
 * an SSH refusal; each business event is one line in the log; the route is 404 without the token.
 */
describe('metrics and events', () => {
  let t: PaymentsTestApp;
  let ssh: SshServer;
  let key: SshKey;
  const lines: string[] = [];
  const events = (name: string) =>
    lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.event === name);

  beforeAll(async () => {
    t = await createPaymentsApp({
      env: { METRICS_TOKEN: TOKEN, METRICS_PORT: '0', LOG_LEVEL: 'info' },
      jobs: [cutJob],
      logDestination: { write: (line: string) => lines.push(line) },
    });
    t.ctx.inspectRelease = testInspector();
    ssh = await startSshServer(t.ctx, hostedRepoAccess(t.ctx), { port: 0, host: '127.0.0.1' });
    key = await sshKeygen('ed25519');
  });
  afterAll(async () => {
    await ssh?.close();
    await t?.close();
  });

  async function scrape(): Promise<Scrape> {
    const res = await t.app.inject({ url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.headers['cache-control']).toBe('no-store');
    return new Scrape(res.body);
  }

  it('is 404 without the token, with a wrong one, and when no token is configured', async () => {
    for (const headers of [{}, { authorization: 'Bearer wrong' }, { authorization: TOKEN }]) {
      const res = await t.app.inject({ url: '/metrics', headers });
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe('not_found');
    }
    const plain = await createTestApp();
    try {
      const res = await plain.app.inject({ url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe('not_found');
    } finally {
      await plain.close();
    }
    const openapi = (await t.app.inject({ url: '/api/openapi.json' })).json();
    expect(Object.keys(openapi.paths)).not.toContain('/metrics');
  });

  it('counts a purchase and a refused purchase by outcome, and their settlement', async () => {
    const fixture = await publishListing(t, { slug: 'metered' });
    const before = await scrape();

    const paid = await buy(t, fixture, await fundedWallet(t, 10_000_000n));
    expect(paid.statusCode, paid.body).toBe(200);
    const broke = await buy(t, fixture, await fundedWallet(t, 0n));
    expect(broke.statusCode, broke.body).toBe(402);
    expect(broke.json().code).toBe('insufficient_balance');

    const after = await scrape();
    const moved = (name: string, labels: Record<string, string> = {}) =>
      after.value(name, labels) - before.value(name, labels);
    expect(moved('repo402_purchases_total', { outcome: 'new' })).toBe(1);
    expect(moved('repo402_purchases_total', { outcome: 'refused', code: 'insufficient_balance' })).toBe(1);
    // Each buyer was quoted first.
    expect(moved('repo402_purchases_total', { outcome: 'payment_required' })).toBe(2);
    expect(
      after.observations('repo402_settlement_duration_seconds', { outcome: 'settled' }) -
        before.observations('repo402_settlement_duration_seconds', { outcome: 'settled' }),
    ).toBe(1);
    expect(moved('repo402_http_requests_total', { route: '/api/r/:owner/:slug', status: '200' })).toBe(1);
    expect(moved('repo402_http_requests_total', { route: '/api/r/:owner/:slug', status: '402' })).toBe(3);
    expect(after.value('repo402_payments_awaiting_settlement')).toBe(0);
    // What a reconciliation left for the operator: nothing here, so payouts are not held.
    expect(after.value('repo402_transfers_out_unresolved')).toBe(0);
    expect(after.value('repo402_sales_unattributed')).toBe(0);
    expect(after.value('repo402_payment_oldest_awaiting_settlement_seconds')).toBe(0);
    // Node's process metrics are there once an operator exposes the metrics.
    expect(after.has('process_cpu_user_seconds_total')).toBe(true);
    expect(after.has('nodejs_eventloop_lag_seconds')).toBe(true);

    const [granted] = events('purchase.granted').filter(
      (line) => line.listing === `${fixture.owner}/metered`,
    );
    expect(granted).toMatchObject({ kind: 'new', version: '1.0.0', via: 'http' });
    expect(events('settlement.decided').some((line) => line.state === 'settled')).toBe(true);
  });

  it('counts a cut by verdict and an SSH refusal by reason, and logs the push and the cut', async () => {
    const { creator, listing, remote, work } = await taggedHostedListing(t, ssh.port, key);
    const before = await scrape();

    const stranger = await sshKeygen('ed25519');
    const refused = await gitOverSsh(work.dir, stranger.file, ['push', remote, 'main', '--tags']);
    expect(refused.code).not.toBe(0);
    const pushed = await gitOverSsh(work.dir, key.file, ['push', remote, 'main', '--tags']);
    expect(pushed.code, pushed.stderr).toBe(0);
    await eventually(async () => {
      const release = await findRelease(t.ctx.database.db, listing.id, '1.0.0');
      return release?.verdict === 'pass' ? release : undefined;
    });

    const after = await eventually(async () => {
      const scraped = await scrape();
      return scraped.value('repo402_ssh_refusals_total', { reason: 'unknown_key' }) >
        before.value('repo402_ssh_refusals_total', { reason: 'unknown_key' })
        ? scraped
        : undefined;
    });
    const moved = (name: string, labels: Record<string, string> = {}) =>
      after.value(name, labels) - before.value(name, labels);
    expect(moved('repo402_ssh_refusals_total', { reason: 'unknown_key' })).toBe(1);
    expect(moved('repo402_release_cuts_total', { verdict: 'pass' })).toBe(1);
    expect(
      after.observations('repo402_release_cut_duration_seconds', { verdict: 'pass' }) -
        before.observations('repo402_release_cut_duration_seconds', { verdict: 'pass' }),
    ).toBe(1);
    expect(after.value('repo402_job_queue_depth', { queue: 'releases.cut' })).toBe(0);

    const name = `${listing.owner}/${listing.slug}`;
    expect(events('push.received').find((line) => line.listing === name)).toMatchObject({
      queued: ['1.0.0'],
    });
    expect(events('release.cut').find((line) => line.listing === name)).toMatchObject({
      version: '1.0.0',
      verdict: 'pass',
      trigger: 'push',
    });
    expect(events('creator.registered').some((line) => line.creator_id === creator.id)).toBe(true);
  }, 60_000);

  it('serves /metrics (with the token) and /ready on the second listener', async () => {
    const listener = (await startMetricsListener(t.ctx))!;
    try {
      const refused = await fetch(`${listener.address}/metrics`);
      expect(refused.status).toBe(401);
      const scraped = await fetch(`${listener.address}/metrics`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      expect(scraped.status).toBe(200);
      expect(new Scrape(await scraped.text()).has('repo402_purchases_total')).toBe(true);

      const ready = await fetch(`${listener.address}/ready`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ ready: true, paused: false });
      await t.ctx.pause.set(true);
      const paused = await fetch(`${listener.address}/ready`);
      expect(paused.status).toBe(503);
      expect(await paused.json()).toMatchObject({ ready: false, paused: true });
      // A paused server still answers its metrics.
      expect(
        (await t.app.inject({ url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } })).statusCode,
      ).toBe(200);
    } finally {
      await t.ctx.pause.set(false);
      await listener.close();
    }
  });

  it('logs no wallet address in clear in request lines', async () => {
    const wallet = await fundedWallet(t, 0n);
    await t.app.inject({ url: `/api/devnet/balance/${wallet.address}` });
    const logged = lines.filter((line) => line.includes('/api/devnet/balance/'));
    expect(logged.length).toBeGreaterThan(0);
    for (const line of logged) {
      expect(line.toLowerCase()).not.toContain(wallet.address.toLowerCase());
      expect(line).toContain(`0x…${wallet.address.slice(-4)}`);
    }
  });
});
