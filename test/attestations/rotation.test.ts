import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { countersign } from '../../src/attestations/envelope.js';
import { signingKeyFromSeed } from '../../src/attestations/keys.js';
import { keysDocument } from '../../src/attestations/service.js';
import { appendSignature, attestationsUnsignedBy } from '../../src/attestations/store.js';
import { trustedKeysOf, verifyAttestation } from '../../src/attestations/verify.js';
import { operations } from '../../src/operations.js';
import { findRelease, insertRelease } from '../../src/releases/store.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { BACKENDS } from '../support/db.js';
import { addFixtureReleases, publishedListingFixture } from '../support/listings.js';
import { type StatementJson, specVerify } from './support.js';

type Envelope = { payloadType: string; payload: string; signatures: Array<{ keyid: string; sig: string }> };
type KeysDocument = {
  keys: Array<{ keyid: string; public_key: string; not_before: string; not_after: string | null }>;
};

describe.each(BACKENDS)('attestation key rotation (%s)', (backend) => {
  const seedA = randomBytes(32).toString('hex');
  const seedB = randomBytes(32).toString('hex');
  const keyA = signingKeyFromSeed(Buffer.from(seedA, 'hex'));
  const keyB = signingKeyFromSeed(Buffer.from(seedB, 'hex'));
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({ backend, env: { ATTESTATION_KEY: seedA } });
  });
  afterEach(async () => t.close());

  const get = async (url: string) => {
    const res = await t.app.inject({ url });
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };
  const attestation = (owner: string, slug: string, version: string): Promise<Envelope> =>
    get(`/api/v/${owner}/${slug}/releases/${version}/attestation`);
  const only = (document: KeysDocument, keyid: string): KeysDocument => ({
    keys: document.keys.filter((key) => key.keyid === keyid),
  });

  it('keeps old attestations verifying with the old key id, signs new ones with the new key, and re-signs only by adding a signature', async () => {
    const fixture = await publishedListingFixture(t, { releases: [{ version: '1.0.0' }] });
    const { owner, slug } = fixture;
    const zipOf = (version: string) => fixture.zips.get(version)!.bytes;

    t.clock.advance(60_000);
    // The operator rotates: a new ATTESTATION_KEY. Its first signature closes the old key's window.
    t.config.attestationKey = seedB;
    await addFixtureReleases(t, fixture, [{ version: '1.1.0' }]);

    const keys = (await get('/.well-known/repo402-keys.json')) as KeysDocument;
    expect(keys.keys.map((key) => key.keyid)).toEqual([keyA.keyid, keyB.keyid]);
    const [a, b] = keys.keys;
    expect(a!.not_after).toBe(b!.not_before);
    expect(b!.not_after).toBeNull();

    const old = await attestation(owner, slug, '1.0.0');
    const current = await attestation(owner, slug, '1.1.0');
    expect(old.signatures.map((s) => s.keyid)).toEqual([keyA.keyid]);
    expect(current.signatures.map((s) => s.keyid)).toEqual([keyB.keyid]);
    const oldCheck = verifyAttestation(old, trustedKeysOf(keys), {
      artifactSha256: fixture.zips.get('1.0.0')!.sha256,
    });
    expect(oldCheck).toMatchObject({ ok: true, keyid: keyA.keyid });
    expect(
      verifyAttestation(current, trustedKeysOf(keys), { artifactSha256: fixture.zips.get('1.1.0')!.sha256 }),
    ).toMatchObject({
      ok: true,
      keyid: keyB.keyid,
    });
    expect(specVerify(old, only(keys, keyA.keyid), zipOf('1.0.0')).ok).toBe(true);
    expect(specVerify(old, only(keys, keyB.keyid), zipOf('1.0.0')).ok).toBe(false);
    expect(specVerify(current, only(keys, keyB.keyid), zipOf('1.1.0')).ok).toBe(true);
    expect(specVerify(current, only(keys, keyA.keyid), zipOf('1.1.0')).ok).toBe(false);

    // The explicit re-signing adds B's signature to 1.0.0; the statement stays byte for byte.
    expect(await operations['attestations.resign'].run(t.ctx, {})).toEqual({ keyid: keyB.keyid, signed: 1 });
    expect(await operations['attestations.resign'].run(t.ctx, {})).toEqual({ keyid: keyB.keyid, signed: 0 });
    const resigned = await attestation(owner, slug, '1.0.0');
    expect(resigned.payload).toBe(old.payload);
    expect(resigned.signatures[0]).toEqual(old.signatures[0]);
    expect(resigned.signatures.map((s) => s.keyid)).toEqual([keyA.keyid, keyB.keyid]);
    expect(specVerify(resigned, only(keys, keyA.keyid), zipOf('1.0.0')).ok).toBe(true);
    // B now vouches for 1.0.0's time too: its window moves back to that statement's attested_at,
    // so a buyer who trusts B alone (after a compromise of A) verifies the old release with B.
    const oldAt = JSON.parse(Buffer.from(old.payload, 'base64').toString('utf8')).predicate.attested_at;
    expect(oldAt).toBe(a!.not_before);
    const after = (await keysDocument(t.ctx.database.db)) as KeysDocument;
    expect(after.keys.map((key) => [key.keyid, key.not_before, key.not_after])).toEqual([
      [keyA.keyid, a!.not_before, a!.not_after],
      [keyB.keyid, oldAt, null],
    ]);
    expect(specVerify(resigned, only(after, keyB.keyid), zipOf('1.0.0')).ok).toBe(true);
    expect(verifyAttestation(resigned, trustedKeysOf(only(after, keyB.keyid)))).toMatchObject({
      ok: true,
      keyid: keyB.keyid,
    });
    // With B's window as it was before the re-signing, B's signature on the older statement does not count.
    expect(specVerify(resigned, only(keys, keyB.keyid), zipOf('1.0.0')).ok).toBe(false);
    expect(verifyAttestation(resigned, trustedKeysOf(only(keys, keyB.keyid)))).toEqual({
      ok: false,
      reason: `key ${keyB.keyid} was not valid when the statement was signed: attested_at ${oldAt} is outside its window (${b!.not_before} to now)`,
    });

    // The database itself refuses to change a statement or drop a signature.
    const db = t.ctx.database.db;
    await expect(db.execute(sql`update release_attestations set payload = '{}'`)).rejects.toThrow();
    await expect(db.execute(sql`update release_attestations set signatures = '[]'::jsonb`)).rejects.toThrow();
    await expect(db.execute(sql`delete from release_attestations`)).rejects.toThrow();

    // A retired key never signs again: going back to A fails the release's recording, not silently.
    t.config.attestationKey = seedA;
    await expect(addFixtureReleases(t, fixture, [{ version: '1.2.0' }])).rejects.toThrow(/retired/);
  });

  it("re-signing moves the key's window back over what it signed before, also on a run with nothing to sign", async () => {
    const fixture = await publishedListingFixture(t, { releases: [{ version: '1.0.0' }] });
    t.clock.advance(60_000);
    t.config.attestationKey = seedB;
    await addFixtureReleases(t, fixture, [{ version: '1.1.0' }]);
    const db = t.ctx.database.db;
    const before = (await keysDocument(db)) as KeysDocument;
    // B's signature on 1.0.0 appended with no window change, as a re-signing did before windows moved.
    const [unsigned] = await attestationsUnsignedBy(db, keyB.keyid, null, 10);
    await appendSignature(db, unsigned!.releaseId, countersign(unsigned!.envelope, keyB));
    expect((await keysDocument(db)).keys[1]!.not_before).toBe(before.keys[1]!.not_before);
    expect(await operations['attestations.resign'].run(t.ctx, {})).toEqual({ keyid: keyB.keyid, signed: 0 });
    const oldAt = JSON.parse(Buffer.from(unsigned!.envelope.payload, 'base64').toString('utf8')).predicate
      .attested_at;
    const after = (await keysDocument(db)) as KeysDocument;
    expect(after.keys.map((key) => [key.keyid, key.not_before])).toEqual([
      [keyA.keyid, before.keys[0]!.not_before],
      [keyB.keyid, oldAt],
    ]);
    const resigned = await attestation(fixture.owner, fixture.slug, '1.0.0');
    expect(specVerify(resigned, only(after, keyB.keyid), fixture.zips.get('1.0.0')!.bytes).ok).toBe(true);
  });

  it('backfills the releases recorded before attestations existed, once', async () => {
    const fixture = await publishedListingFixture(t, { releases: [{ version: '1.0.0' }] });
    const db = t.ctx.database.db;
    // A release row as an older version of the service left it: final, with no attestation.
    const legacy = (await findRelease(db, fixture.listingId, '1.0.0'))!;
    await insertRelease(db, {
      ...legacy,
      id: undefined,
      version: '0.9.0',
      major: 0,
      minor: 9,
      patch: 0,
      tag: 'v0.9.0',
    });
    expect(await operations['attestations.backfill'].run(t.ctx, {})).toEqual({ attested: 1 });
    expect(await operations['attestations.backfill'].run(t.ctx, {})).toEqual({ attested: 0 });
    const envelope = await attestation(fixture.owner, fixture.slug, '0.9.0');
    const keys = (await get('/.well-known/repo402-keys.json')) as KeysDocument;
    const checked = specVerify(envelope, keys, fixture.zips.get('1.0.0')!.bytes);
    expect(checked.ok, JSON.stringify(checked)).toBe(true);
    expect((checked as { statement: StatementJson }).statement.predicate).toMatchObject({
      version: '0.9.0',
      tag: 'v0.9.0',
    });
  });

  it('answers 404 for a pending release, an unknown version, a junk version and a draft listing', async () => {
    const fixture = await publishedListingFixture(t, {
      releases: [{ version: '1.0.0' }, { version: '1.1.0', verdict: 'pending' }],
    });
    const draft = await publishedListingFixture(t, { status: 'draft' });
    for (const url of [
      `/api/v/${fixture.owner}/${fixture.slug}/releases/1.1.0/attestation`,
      `/api/v/${fixture.owner}/${fixture.slug}/releases/9.9.9/attestation`,
      `/api/v/${fixture.owner}/${fixture.slug}/releases/latest/attestation`,
      `/api/v/${draft.owner}/${draft.slug}/releases/1.0.0/attestation`,
    ]) {
      const res = await t.app.inject({ url });
      expect(res.statusCode, url).toBe(404);
      expect(res.json().code).toBe('not_found');
    }
    const log = await get(`/api/v/${fixture.owner}/${fixture.slug}/releases`);
    expect(
      log.releases.map((r: { version: string; attestation_url?: string }) => [r.version, r.attestation_url]),
    ).toEqual([
      ['1.1.0', undefined],
      ['1.0.0', `http://repo402.test/api/v/${fixture.owner}/${fixture.slug}/releases/1.0.0/attestation`],
    ]);
  });
});
