import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { releases } from '../../src/db/schema/index.js';
import { recheckReleases } from '../../src/releases/advisory-flags.js';
import { advisoryRecheckJob, advisorySyncJob, syncAdvisoriesNow } from '../../src/releases/advisory-jobs.js';
import { newWallet } from '../identity/support.js';
import { buy, createPaymentsApp, fundedWallet, walletSignatureHeader } from '../purchases/support.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { BACKENDS } from '../support/db.js';
import { publishedListingFixture } from '../support/listings.js';
import { OsvMirror, osvFixture } from '../support/osv-mirror.js';

const MINIMIST_CRITICAL = osvFixture('GHSA-xvch-5gv4-984h');
// GitHub's MODERATE lodash record, as a LOW one: disclosed by a scan, never blocking.
const LODASH_LOW = {
  ...osvFixture('GHSA-29mw-wpgm-hmr9'),
  severity: [],
  database_specific: { severity: 'LOW' },
};

/** A release resolving minimist 1.2.5 (affected by GHSA-xvch-5gv4-984h) and lodash 4.17.20. */
const LOCKED_FILES = {
  'README.md': '# argv tools\n\nParses arguments.\n',
  'package.json': JSON.stringify({
    name: 'argv-tools',
    version: '1.0.0',
    dependencies: { minimist: '^1.2.0', lodash: '^4.17.0' },
  }),
  'package-lock.json': JSON.stringify({
    name: 'argv-tools',
    version: '1.0.0',
    lockfileVersion: 3,
    requires: true,
    packages: {
      '': { name: 'argv-tools', version: '1.0.0', dependencies: { minimist: '^1.2.0', lodash: '^4.17.0' } },
      'node_modules/minimist': { version: '1.2.5' },
      'node_modules/lodash': { version: '4.17.20' },
    },
  }),
};

// biome-ignore lint/suspicious/noExplicitAny: answers are asserted field by field
type Json = Record<string, any>;

describe.each(BACKENDS)(
  'releases flagged by advisory data that arrives after their scan, on %s',
  (backend) => {
    let t: TestApp | undefined;
    let mirror: OsvMirror | undefined;
    let client: Client | undefined;
    afterEach(async () => {
      await client?.close();
      await t?.close();
      await mirror?.close();
      client = t = mirror = undefined;
    });

    it('flags a clean release on its manifest, version status, release log and MCP tools when a CRITICAL record arrives; a LOW one does not; a re-run changes nothing', {
      timeout: 120_000,
    }, async () => {
      mirror = await OsvMirror.start();
      const app = await createPaymentsApp({ backend, env: { OSV_URL: mirror.url } });
      t = app;
      const f = await publishedListingFixture(app, { releases: [{ version: '1.0.0', files: LOCKED_FILES }] });
      const label = async () =>
        (await app.app.inject({ url: `/api/label/${f.owner}/${f.slug}` })).json() as Json;
      expect((await label()).computed.scan.verdict).toBe('pass');
      expect(await label()).not.toHaveProperty('advisory_flag');
      const holder = await fundedWallet(app, 10_000_000n);
      expect((await buy(app, f, holder)).statusCode).toBe(200);

      // A LOW advisory for lodash 4.17.20 arrives: disclosed at most, never a flag.
      await mirror.publishAll({ npm: [LODASH_LOW] });
      const low = await syncAdvisoriesNow(app.ctx);
      expect(low).toMatchObject({ imported: 1, releases: { checked: 1, flagged: 0, changed: 0 } });
      expect(await label()).not.toHaveProperty('advisory_flag');

      // minimist 1.2.5 is affected by a CRITICAL record that arrives with the next export.
      app.clock.advance(60_000);
      await mirror.publish('npm', [LODASH_LOW, MINIMIST_CRITICAL]);
      const critical = await syncAdvisoriesNow(app.ctx);
      expect(critical).toMatchObject({ imported: 1, releases: { checked: 1, flagged: 1, changed: 1 } });
      const flaggedAt = app.clock.now().toISOString();
      const flag = {
        flagged_at: flaggedAt,
        advisory_ids: ['GHSA-xvch-5gv4-984h'],
        findings: [
          expect.objectContaining({
            kind: 'vulnerability',
            check: 'known_vulns',
            tier: 'blocking',
            rule_id: 'GHSA-xvch-5gv4-984h',
            severity: 'CRITICAL',
            path: 'package-lock.json',
            package: expect.objectContaining({ ecosystem: 'npm', name: 'minimist', version: '1.2.5' }),
          }),
        ],
      };
      const manifest = await label();
      expect(manifest.advisory_flag).toEqual(flag);
      // The scan is terminal: its verdict stays what it was.
      expect(manifest.computed.scan.verdict).toBe('pass');

      const page = await app.app.inject({ url: `/${f.owner}/${f.slug}` });
      expect(page.body).toContain('id="advisory-flag"');
      expect(page.body).toContain('GHSA-xvch-5gv4-984h');

      const status = (await app.app.inject({ url: `/api/v/${f.owner}/${f.slug}` })).json() as Json;
      expect(status.advisory_flag).toEqual(flag);
      expect(status).not.toHaveProperty('flagged_holdings');
      const signed = await app.app.inject({
        url: `/api/v/${f.owner}/${f.slug}`,
        headers: { 'x-wallet-signature': await walletSignatureHeader(app, holder) },
      });
      expect(signed.json().flagged_holdings).toEqual([{ version: '1.0.0', ...flag }]);
      const stranger = await app.app.inject({
        url: `/api/v/${f.owner}/${f.slug}`,
        headers: { 'x-wallet-signature': await walletSignatureHeader(app, newWallet()) },
      });
      expect(stranger.json()).not.toHaveProperty('flagged_holdings');
      const log = (await app.app.inject({ url: `/api/v/${f.owner}/${f.slug}/releases` })).json() as Json;
      expect(log.releases[0].advisory_flag).toEqual(flag);

      const base = await app.app.listen({ port: 0, host: '127.0.0.1' });
      client = new Client({ name: 'repo402-test-agent', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/api/mcp`)));
      const call = async (name: string, args: Json) =>
        ((await client!.callTool({ name, arguments: args })) as CallToolResult).structuredContent as Json;
      expect((await call('check_version', { owner: f.owner, slug: f.slug })).advisory_flag).toEqual(flag);
      const held = await call('check_version', {
        owner: f.owner,
        slug: f.slug,
        wallet_signature: await walletSignatureHeader(app, holder),
      });
      expect(held.flagged_holdings).toEqual([{ version: '1.0.0', ...flag }]);
      expect((await call('get_listing', { owner: f.owner, slug: f.slug })).advisory_flag).toEqual(flag);

      // Running it again, later, finds the same and writes nothing: one flag, its first time.
      app.clock.advance(60_000);
      expect(await recheckReleases(app.ctx)).toEqual({ checked: 1, flagged: 1, changed: 0 });
      expect((await label()).advisory_flag).toEqual(flag);
      const [row] = await app.ctx.database.db
        .select({ flag: releases.advisoryFlag })
        .from(releases)
        .where(eq(releases.listingId, f.listingId));
      expect((row!.flag as Json).advisory_ids).toEqual(['GHSA-xvch-5gv4-984h']);

      // Withdrawn, the record no longer flags anything.
      await mirror.publish('npm', [
        LODASH_LOW,
        { ...MINIMIST_CRITICAL, modified: '2026-11-21T00:00:00Z', withdrawn: '2026-11-21T00:00:00Z' },
      ]);
      expect(await syncAdvisoriesNow(app.ctx)).toMatchObject({ releases: { flagged: 0, changed: 1 } });
      expect(await label()).not.toHaveProperty('advisory_flag');
    });

    it('runs the sync and the re-check as jobs, and the hourly job does nothing with OSV_SYNC off', {
      timeout: 60_000,
    }, async () => {
      mirror = await OsvMirror.start();
      const off = await createTestApp({ backend, env: { OSV_URL: mirror.url } });
      t = off;
      expect(off.config.advisories.sync).toBe(false);
      await advisorySyncJob.run(off.ctx, {}, { id: 'by-hand', retryCount: 0 });
      expect(mirror.requests).toEqual([]);
      await off.close();
      t = undefined;

      t = await createTestApp({
        backend,
        env: { OSV_URL: mirror.url, OSV_SYNC: 'true' },
        jobs: [advisorySyncJob, advisoryRecheckJob],
      });
      const f = await publishedListingFixture(t, { releases: [{ version: '1.0.0', files: LOCKED_FILES }] });
      await mirror.publishAll({ npm: [MINIMIST_CRITICAL] });
      await t.ctx.jobs!.send(advisorySyncJob, {});
      const deadline = Date.now() + 30_000;
      let manifest: Json = {};
      while (Date.now() < deadline && !manifest.advisory_flag) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        manifest = (await t.app.inject({ url: `/api/label/${f.owner}/${f.slug}` })).json();
      }
      expect(manifest.advisory_flag?.advisory_ids).toEqual(['GHSA-xvch-5gv4-984h']);
    });
  },
);

describe('advisory sync configuration', () => {
  it('syncs by default on mainnet only, can be turned off, and takes an http(s) mirror', () => {
    const mainnet = {
      PAYMENTS_MODE: 'mainnet',
      FACILITATOR_URL: 'http://127.0.0.1:1',
      PLATFORM_PAYOUT_ADDRESS: `0x${'1'.repeat(40)}`,
      BASE_RPC_URL: 'http://127.0.0.1:2',
    };
    expect(loadConfig({}).advisories).toEqual({
      osvUrl: 'https://osv-vulnerabilities.storage.googleapis.com',
      sync: false,
    });
    expect(loadConfig(mainnet).advisories.sync).toBe(true);
    expect(loadConfig({ ...mainnet, OSV_SYNC: 'false' }).advisories.sync).toBe(false);
    expect(loadConfig({ OSV_SYNC: 'true', OSV_URL: 'http://mirror.test/osv/' }).advisories).toEqual({
      osvUrl: 'http://mirror.test/osv',
      sync: true,
    });
    expect(() => loadConfig({ OSV_URL: 'ftp://mirror.test' })).toThrow(
      /OSV_URL="ftp:\/\/mirror.test": expected a http: or https:\/\/ URL/,
    );
    expect(() => loadConfig({ OSV_SYNC: 'sometimes' })).toThrow(/OSV_SYNC/);
  });
});
