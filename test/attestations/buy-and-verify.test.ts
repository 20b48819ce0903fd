import { execFile } from 'node:child_process';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
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
} from '../payments/support.js';
import { codeBlocks } from '../support/code-blocks.js';
import { BACKENDS } from '../support/db.js';
import { freePort, runCli } from '../support/process.js';
import { type StatementJson, specVerify, withEditedStatement } from './support.js';

type Envelope = { payloadType: string; payload: string; signatures: Array<{ keyid: string; sig: string }> };

describe.each(BACKENDS)('a zip bought with @x402/fetch verifies against its attestation (%s)', (backend) => {
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

  // Five CLI processes (tsx) and a shell: slow on a loaded two-core machine, hence its own timeout.
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
      artifact: { name: `${fixture.slug}-1.0.0.zip`, sha256: logged.artifact_sha256, size_bytes: zip.length },
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

    // The CLI, offline: the files as a buyer saved them.
    const files = {
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
    const other = generateKeyPairSync('ed25519').publicKey;
    const otherRaw = Buffer.from(other.export({ format: 'jwk' }).x!, 'base64url');
    const otherKeys = {
      keys: [
        {
          keyid: createHash('sha256').update(otherRaw).digest('hex'),
          algorithm: 'ed25519',
          public_key: otherRaw.toString('base64url'),
        },
      ],
    };
    await writeFile(files.zip, zip);
    await writeFile(files.attestation, JSON.stringify(envelope));
    await writeFile(files.keys, JSON.stringify(keys));
    await writeFile(files.tamperedZip, tamperedZip);
    await writeFile(files.tamperedStatement, JSON.stringify(tamperedStatement));
    await writeFile(files.otherKeys, JSON.stringify(otherKeys));

    const ok = await runCli(['verify', files.zip, files.attestation, '--key', files.keys], {});
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toBe(
      `verified ${files.zip}: ${fixture.owner}/${fixture.slug} 1.0.0 (tag v1.0.0, commit ${logged.commit_sha}, tree ${statement.predicate.tree_sha}, scan pass) signed by key ${keys.keys[0]!.keyid} from ${files.keys}\n`,
    );
    // The keys fetched from the service's well-known URL.
    const online = await runCli(
      ['verify', files.zip, files.attestation, '--key', `${base}/.well-known/repo402-keys.json`],
      {},
    );
    expect(online.code, online.stderr).toBe(0);

    const cases = [
      {
        name: 'tampered zip',
        args: [files.tamperedZip, files.attestation, '--key', files.keys],
        reason: /is not the attested subject/,
      },
      {
        name: 'tampered statement',
        args: [files.zip, files.tamperedStatement, '--key', files.keys],
        reason: /does not verify/,
      },
      {
        name: 'wrong key',
        args: [files.zip, files.attestation, '--key', files.otherKeys],
        reason: /no signature by a trusted key/,
      },
    ];
    const results = await Promise.all(cases.map((failing) => runCli(['verify', ...failing.args], {})));
    cases.forEach((failing, i) => {
      expect(results[i]!.code, failing.name).toBe(1);
      expect(results[i]!.stdout, failing.name).toMatch(/^NOT VERIFIED /);
      expect(results[i]!.stdout, failing.name).toMatch(failing.reason);
    });
    // The buying guide's standard-tools steps, as a reader pastes them, on the same download.
    const guide = await (await fetch(`${base}/docs/buying`)).text();
    const steps = codeBlocks(guide, 'sh').find((block) => block.includes('openssl pkeyutl'))!;
    const run = (script: string) =>
      promisify(execFile)('bash', ['-euo', 'pipefail', '-c', script], { cwd: dir }).then(
        (out) => ({ code: 0, stdout: out.stdout }),
        (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }),
      );
    const pasted = (attestationAt: string) =>
      steps
        .replaceAll('<attestation_url>', attestationAt)
        .replaceAll('<slug>-<version>.zip', path.basename(files.zip));
    const standard = await run(pasted(grant.attestation_url));
    expect(standard.code, standard.stdout).toBe(0);
    expect(standard.stdout).toContain('the zip is the subject');
    expect(standard.stdout).toContain('Signature Verified Successfully');
    expect(standard.stdout).toContain('the key id matches');
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
    expect(forged.code).not.toBe(0);
    expect(forged.stdout).toContain('the zip is the subject');
    expect(forged.stdout).not.toContain('Signature Verified Successfully');

    expect(specVerify(envelope, keys, tamperedZip).ok).toBe(false);
    expect(specVerify(tamperedStatement, keys, zip).ok).toBe(false);
    expect(specVerify(envelope, otherKeys, zip).ok).toBe(false);
  }, 120_000);
});
