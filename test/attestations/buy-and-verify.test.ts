import { execFile } from 'node:child_process';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createPaymentsApp,
  fundedWallet,
  type PaymentsTestApp,
  publishListing,
} from '../purchases/support.js';
import { codeBlocks } from '../support/code-blocks.js';
import { PGLITE_ONLY } from '../support/db.js';
import { freePort, runCli } from '../support/process.js';
import { type StatementJson, specVerify, withEditedStatement } from './support.js';

type Envelope = { payloadType: string; payload: string; signatures: Array<{ keyid: string; sig: string }> };

describe.each(PGLITE_ONLY)(
  'a zip bought with @x402/fetch verifies against its attestation (%s)',
  (backend) => {
    let t: PaymentsTestApp;
    let base: string;
    let dir: string;
    beforeEach(async () => {
      const port = await freePort();
      base = `http://127.0.0.1:${port}`;
      t = await createPaymentsApp({ backend, env: { BASE_URL: base } });
      await t.app.listen({ port, host: '127.0.0.1' });
      dir = await mkdtemp(path.join(os.tmpdir(), 'repo402-verify-'));
    });
    afterEach(async () => {
      await t.close();
      await rm(dir, { recursive: true, force: true });
    });

    // A dozen CLI processes (tsx) and seven shells: slow on a loaded two-core machine, hence its own timeout.
    it('buys, downloads, fetches the attestation and the keys, and verifies with the CLI and a spec verifier; tampering fails', async () => {
      const fixture = await publishListing(t, { priceMicro: 2_000_000n });
      const buyer = await fundedWallet(t, 10_000_000n);
      const client = new x402Client()
        .register('eip155:*', new ExactEvmScheme(buyer))
        .setSpendControls({ maxAmountPerPayment: '$10' } as never);
      const response = await wrapFetchWithPayment(
        fetch,
        client,
      )(`${base}/api/r/${fixture.owner}/${fixture.slug}`);
      expect(response.status, await response.clone().text()).toBe(200);
      const grant = (await response.json()) as {
        download_url: string;
        attestation_url: string;
        version: string;
      };
      const attestationUrl = `${base}/api/v/${fixture.owner}/${fixture.slug}/releases/1.0.0/attestation`;
      expect(grant.attestation_url).toBe(attestationUrl);
      const zip = Buffer.from(await (await fetch(grant.download_url)).arrayBuffer());

      const served = await fetch(grant.attestation_url);
      expect(served.status).toBe(200);
      expect(served.headers.get('cache-control')).toContain('public');
      expect(served.headers.get('access-control-allow-origin')).toBe('*');
      const envelope = (await served.json()) as Envelope;
      const keysResponse = await fetch(`${base}/.well-known/repo402-keys.json`);
      expect(keysResponse.status).toBe(200);
      const keys = (await keysResponse.json()) as {
        keys: Array<{ keyid: string; public_key: string; not_before: string; not_after: string | null }>;
      };
      expect(keys.keys).toHaveLength(1);
      expect(keys.keys[0]!.not_after).toBeNull();

      // What the statement says, checked by a verifier written from the specifications.
      const checked = specVerify(envelope, keys, zip);
      expect(checked.ok, JSON.stringify(checked)).toBe(true);
      const { statement } = checked as { statement: StatementJson };
      const log = await (await fetch(`${base}/api/v/${fixture.owner}/${fixture.slug}/releases`)).json();
      const logged = log.releases[0];
      expect(logged.attestation_url).toBe(attestationUrl);
      expect(statement.subject).toEqual([
        { name: `${fixture.slug}-1.0.0.zip`, digest: { sha256: fixture.zips.get('1.0.0')!.sha256 } },
      ]);
      expect(statement.predicateType).toBe(`${base}/docs/attestations/release/v1`);
      // The predicate type's URI documents it.
      const predicateDoc = await fetch(statement.predicateType);
      expect(predicateDoc.status).toBe(200);
      const predicateHtml = await predicateDoc.text();
      expect(predicateHtml).toContain('Predicate fields');
      expect(predicateHtml).toContain(`${base}/.well-known/repo402-keys.json`);
      expect(statement.predicate).toMatchObject({
        service: base,
        listing: {
          id: fixture.listingId,
          owner: fixture.owner,
          slug: fixture.slug,
          channel: `${fixture.owner}/${fixture.slug}`,
          source: 'hosted',
        },
        version: '1.0.0',
        tag: 'v1.0.0',
        commit_sha: logged.commit_sha,
        cut_at: logged.published_at,
        artifact: {
          name: `${fixture.slug}-1.0.0.zip`,
          sha256: logged.artifact_sha256,
          size_bytes: zip.length,
        },
        scan: { verdict: 'pass', scanner_version: logged.scanner_version },
        analyzer_version: logged.analyzer_version,
        diff_summary: logged.diff_summary,
      });
      expect(statement.predicate.tree_sha).toMatch(/^[0-9a-f]{40}$/);
      expect(statement.predicate.scan.counts).toEqual({
        blocking: 0,
        disclosed: expect.any(Number),
        review: expect.any(Number),
      });
      expect(statement.predicate.scan.advisory_dataset).toEqual(expect.any(String));
      expect(statement.predicate.licence).toEqual({ spdx: expect.any(String), verdict: expect.any(String) });
      const manifest = await (await fetch(`${base}/api/label/${fixture.owner}/${fixture.slug}`)).json();
      expect(manifest.attestation_url).toBe(attestationUrl);
      const page = await (await fetch(`${base}/${fixture.owner}/${fixture.slug}`)).text();
      expect(page).toContain(`href="${attestationUrl}"`);

      // A genuine release of another listing at the same version: another owner's `tool-kit`, so even
      // the zip's name is the same. Passed off as the one bought, it must not verify.
      const other = await publishListing(t, {});
      expect(other.slug).toBe(fixture.slug);
      expect(other.owner).not.toBe(fixture.owner);
      const otherEnvelope = (await (
        await fetch(`${base}/api/v/${other.owner}/${other.slug}/releases/1.0.0/attestation`)
      ).json()) as Envelope;
      const bought = `${fixture.owner}/${fixture.slug}@1.0.0`;
      const attestedAt: string = statement.predicate.attested_at;
      // The same key with a window that excludes the statement's time: retired before it, or not yet in use.
      const shifted = (ms: number) => new Date(Date.parse(attestedAt) + ms).toISOString();
      const retiredKeys = {
        keys: [{ ...keys.keys[0]!, not_before: shifted(-3_600_000), not_after: shifted(-1) }],
      };
      const notYetKeys = { keys: [{ ...keys.keys[0]!, not_before: shifted(1), not_after: null }] };

      // The CLI, offline: the files as a buyer saved them.
      const files = {
        otherDir: path.join(dir, 'other'),
        otherZip: path.join(dir, 'other', `${other.slug}-1.0.0.zip`),
        otherAttestation: path.join(dir, 'other', 'attestation.json'),
        retiredKeys: path.join(dir, 'retired-keys.json'),
        notYetKeys: path.join(dir, 'not-yet-keys.json'),
        zip: path.join(dir, `${fixture.slug}-1.0.0.zip`),
        attestation: path.join(dir, 'attestation.json'),
        keys: path.join(dir, 'keys.json'),
        tamperedZip: path.join(dir, 'tampered.zip'),
        tamperedStatement: path.join(dir, 'tampered-statement.json'),
        otherKeys: path.join(dir, 'other-keys.json'),
      };
      const tamperedZip = Buffer.from(zip);
      tamperedZip[Math.floor(tamperedZip.length / 2)]! ^= 1;
      const tamperedStatement = withEditedStatement(envelope, (s) => {
        s.predicate.scan.verdict = 'pass';
        s.predicate.commit_sha = '0'.repeat(40);
      });
      const otherKey = generateKeyPairSync('ed25519').publicKey;
      const otherRaw = Buffer.from(otherKey.export({ format: 'jwk' }).x!, 'base64url');
      const otherKeys = {
        keys: [
          {
            keyid: createHash('sha256').update(otherRaw).digest('hex'),
            algorithm: 'ed25519',
            public_key: otherRaw.toString('base64url'),
            not_before: shifted(-3_600_000),
            not_after: null,
          },
        ],
      };
      await writeFile(files.zip, zip);
      await writeFile(files.attestation, JSON.stringify(envelope));
      await writeFile(files.keys, JSON.stringify(keys));
      await writeFile(files.tamperedZip, tamperedZip);
      await writeFile(files.tamperedStatement, JSON.stringify(tamperedStatement));
      await writeFile(files.otherKeys, JSON.stringify(otherKeys));
      await mkdir(files.otherDir);
      await writeFile(files.otherZip, other.zips.get('1.0.0')!.bytes);
      await writeFile(files.otherAttestation, JSON.stringify(otherEnvelope));
      await writeFile(files.retiredKeys, JSON.stringify(retiredKeys));
      await writeFile(files.notYetKeys, JSON.stringify(notYetKeys));

      const ok = await runCli(
        ['verify', files.zip, files.attestation, '--key', files.keys, '--expect', bought],
        {},
      );
      expect(ok.code, ok.stderr).toBe(0);
      expect(ok.stdout).toBe(
        `verified ${files.zip}: ${bought} (tag v1.0.0, commit ${logged.commit_sha}, tree ${statement.predicate.tree_sha}, scan pass) attested at ${attestedAt}, signed by key ${keys.keys[0]!.keyid} from ${files.keys}\n`,
      );
      // The keys fetched from the service's well-known URL.
      const online = await runCli(
        [
          'verify',
          files.zip,
          files.attestation,
          '--key',
          `${base}/.well-known/repo402-keys.json`,
          '--expect',
          bought,
        ],
        {},
      );
      expect(online.code, online.stderr).toBe(0);
      // What was bought must be said: without it, or in another form, nothing is verified.
      const unsaid = await runCli(['verify', files.zip, files.attestation, '--key', files.keys], {});
      expect(unsaid.code).toBe(1);
      expect(unsaid.stdout).toBe('');
      expect(unsaid.stderr).toContain("required option '--expect <owner/slug@version>' not specified");
      const malformed = await runCli(
        [
          'verify',
          files.zip,
          files.attestation,
          '--key',
          files.keys,
          '--expect',
          `${fixture.owner}/${fixture.slug}`,
        ],
        {},
      );
      expect(malformed.code).toBe(1);
      expect(malformed.stdout).toBe('');
      expect(malformed.stderr).toContain('expected <owner>/<slug>@<version>');

      const keyid = keys.keys[0]!.keyid;
      const cases = [
        {
          name: 'tampered zip',
          args: [files.tamperedZip, files.attestation, '--key', files.keys, '--expect', bought],
          reason: 'is not the attested subject',
        },
        {
          name: 'tampered statement',
          args: [files.zip, files.tamperedStatement, '--key', files.keys, '--expect', bought],
          reason: 'does not verify',
        },
        {
          name: 'wrong key',
          args: [files.zip, files.attestation, '--key', files.otherKeys, '--expect', bought],
          reason: 'no signature by a trusted key',
        },
        {
          name: "another listing's genuine zip and attestation, same version",
          args: [files.otherZip, files.otherAttestation, '--key', files.keys, '--expect', bought],
          reason: `the attestation is for ${other.owner}/${other.slug}@1.0.0, not ${bought}`,
        },
        {
          name: 'another version expected',
          args: [
            files.zip,
            files.attestation,
            '--key',
            files.keys,
            '--expect',
            `${fixture.owner}/${fixture.slug}@1.0.1`,
          ],
          reason: `the attestation is for ${bought}, not ${fixture.owner}/${fixture.slug}@1.0.1`,
        },
        {
          name: 'a key retired before the statement was signed',
          args: [files.zip, files.attestation, '--key', files.retiredKeys, '--expect', bought],
          reason: `key ${keyid} was not valid when the statement was signed: attested_at ${attestedAt} is outside its window (${shifted(-3_600_000)} to ${shifted(-1)})`,
        },
        {
          name: 'a key not yet in use when the statement was signed',
          args: [files.zip, files.attestation, '--key', files.notYetKeys, '--expect', bought],
          reason: `key ${keyid} was not valid when the statement was signed: attested_at ${attestedAt} is outside its window (${shifted(1)} to now)`,
        },
      ];
      const results = await Promise.all(cases.map((failing) => runCli(['verify', ...failing.args], {})));
      cases.forEach((failing, i) => {
        expect(results[i]!.code, failing.name).toBe(1);
        expect(results[i]!.stdout, failing.name).toMatch(/^NOT VERIFIED /);
        expect(results[i]!.stdout, failing.name).toContain(failing.reason);
      });
      // The other listing's own attestation verifies for what it is.
      const theirs = await runCli(
        [
          'verify',
          files.otherZip,
          files.otherAttestation,
          '--key',
          files.keys,
          '--expect',
          `${other.owner}/${other.slug}@1.0.0`,
        ],
        {},
      );
      expect(theirs.code, theirs.stdout + theirs.stderr).toBe(0);
      // The buying guide's standard-tools steps, as a reader pastes them, on the same download.
      const guide = await (await fetch(`${base}/docs/buying`)).text();
      const steps = codeBlocks(guide, 'sh').find((block) => block.includes('openssl pkeyutl'))!;
      // Pasted into a shell as a reader would: no `set -e`, so every line runs and says OK or FAILED.
      const run = (script: string) =>
        promisify(execFile)('bash', ['-c', script], { cwd: dir }).then(
          (out) => ({ code: 0, stdout: out.stdout }),
          (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }),
        );
      const keysUrl = `${base}/.well-known/repo402-keys.json`;
      expect(steps).toContain(`curl -so keys.json ${keysUrl}\n`);
      expect(steps.startsWith('EXPECT=<owner>/<slug>@<version>\nZIP=<slug>-<version>.zip\n')).toBe(true);
      const pasted = (
        attestationAt: string,
        {
          zipFile = files.zip,
          expect = bought,
          keysAt = keysUrl,
        }: { zipFile?: string; expect?: string; keysAt?: string } = {},
      ) =>
        steps
          .replaceAll('<owner>/<slug>@<version>', expect)
          .replaceAll('<attestation_url>', attestationAt)
          .replaceAll('<slug>-<version>.zip', path.relative(dir, zipFile))
          .replaceAll(keysUrl, keysAt);
      const verdicts = (stdout: string) => stdout.split('\n').filter((line) => /^(OK|FAILED):/.test(line));
      const allOk = [
        'OK: the zip is the subject',
        'OK: the signature verifies',
        'OK: the key id matches',
        `OK: the key was valid at ${attestedAt}`,
        `OK: the statement is about ${bought}`,
      ];
      const standard = await run(pasted(grant.attestation_url));
      expect(standard.code, standard.stdout).toBe(0);
      // Five OK lines, as the guide says.
      expect(verdicts(standard.stdout)).toEqual(allOk);
      expect(guide).toContain('five lines starting <code>OK:</code>');
      // Another listing's genuine zip and attestation at the same version fail at the listing.
      const otherListing = await run(pasted(`file://${files.otherAttestation}`, { zipFile: files.otherZip }));
      expect(verdicts(otherListing.stdout)).toEqual([
        ...allOk.slice(0, 4),
        `FAILED: the statement is about ${other.owner}/${other.slug}@1.0.0, not ${bought}; do not use it`,
      ]);
      // The same, checked for what it is, passes.
      const otherBought = `${other.owner}/${other.slug}@1.0.0`;
      const otherOk = await run(
        pasted(`file://${files.otherAttestation}`, { zipFile: files.otherZip, expect: otherBought }),
      );
      expect(verdicts(otherOk.stdout)).toEqual([
        ...allOk.slice(0, 4),
        `OK: the statement is about ${otherBought}`,
      ]);
      // A key whose window excludes the statement's time fails at the window, either side.
      for (const keysFile of [files.retiredKeys, files.notYetKeys]) {
        const outside = await run(pasted(grant.attestation_url, { keysAt: `file://${keysFile}` }));
        expect(verdicts(outside.stdout), keysFile).toEqual([
          ...allOk.slice(0, 3),
          `FAILED: the key was not valid at ${attestedAt}, when the statement was signed`,
          allOk[4],
        ]);
      }
      // A zip changed after download fails at the subject, loudly.
      const changed = await run(pasted(grant.attestation_url, { zipFile: files.tamperedZip }));
      expect(verdicts(changed.stdout)).toContain('FAILED: the zip is not the attested one; do not use it');
      // A forged statement served in its place fails at the signature.
      await writeFile(
        path.join(dir, 'forged.json'),
        JSON.stringify(
          withEditedStatement(envelope, (s) => {
            s.predicate.tree_sha = '0'.repeat(40);
          }),
        ),
      );
      const forged = await run(pasted(`file://${path.join(dir, 'forged.json')}`));
      expect(verdicts(forged.stdout)).toEqual([
        'OK: the zip is the subject',
        'FAILED: the statement was altered or not signed by this key',
        ...allOk.slice(2),
      ]);

      expect(specVerify(envelope, keys, tamperedZip).ok).toBe(false);
      expect(specVerify(tamperedStatement, keys, zip).ok).toBe(false);
      expect(specVerify(envelope, otherKeys, zip).ok).toBe(false);
      expect(specVerify(envelope, retiredKeys, zip).ok).toBe(false);
      expect(specVerify(envelope, notYetKeys, zip).ok).toBe(false);
    }, 180_000);
  },
);
