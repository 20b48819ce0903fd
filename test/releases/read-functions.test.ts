import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listings, releases } from '../../src/db/schema/index.js';
import { findPublicListing } from '../../src/listings/public-listings.js';
import { parseVersion } from '../../src/platform/versions.js';
import {
  latestPassingRelease,
  openArtifact,
  publishedRelease,
  updateOffer,
} from '../../src/releases/service.js';
import { registerCreator } from '../identity/support.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { BACKENDS } from '../support/db.js';

describe.each(BACKENDS)('release read functions on %s', (backend) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({ backend });
  });
  afterEach(async () => {
    await t.close();
  });

  async function seed(status: 'draft' | 'published' | 'retired') {
    const creator = await registerCreator(t);
    const db = t.ctx.database.db;
    const [listing] = await db
      .insert(listings)
      .values({
        creatorId: creator.id,
        owner: creator.handle,
        slug: 'tool-kit',
        source: 'hosted',
        status,
        priceMicro: 999_999_999_999_999n,
        updatePriceMicro: 1n,
        createdAt: t.clock.now(),
      })
      .returning();
    const verdicts = { '1.0.0': 'pass', '1.2.0': 'fail', '1.10.0': 'pass', '2.0.0': 'pending' } as const;
    for (const [version, verdict] of Object.entries(verdicts)) {
      await t.ctx.blobs.putBytes(`test/${version}.zip`, Buffer.from(`zip ${version}`), 'application/zip');
      await db.insert(releases).values({
        listingId: listing!.id,
        version,
        ...parseVersion(version)!,
        tag: `v${version}`,
        commitSha: 'a'.repeat(40),
        artifactKey: `test/${version}.zip`,
        artifactSha256: 'b'.repeat(64),
        sizeBytes: 10,
        publishedAt: t.clock.now(),
        changelog: `release ${version}`,
        verdict,
      });
    }
    return { creator, listing: listing! };
  }

  it('finds published and retired listings by owner and slug, never drafts, with exact money', async () => {
    const { creator, listing } = await seed('published');
    const found = await findPublicListing(t.ctx.database.db, creator.handle, 'tool-kit');
    expect(found).toMatchObject({ id: listing.id, status: 'published', priceMicro: 999_999_999_999_999n });
    expect(found?.updatePriceMicro).toBe(1n);
    expect(await findPublicListing(t.ctx.database.db, creator.handle, 'other')).toBeNull();
    const draft = await seed('draft');
    expect(await findPublicListing(t.ctx.database.db, draft.creator.handle, 'tool-kit')).toBeNull();
  });

  it('orders releases by version, not by text; on sale counts only passing ones, an update lists every verdict', async () => {
    const { listing } = await seed('published');
    const db = t.ctx.database.db;
    expect((await latestPassingRelease(db, listing.id))?.version).toBe('1.10.0');
    expect((await publishedRelease(db, listing.id, '1.0.0'))?.version).toBe('1.0.0');
    expect(await publishedRelease(db, listing.id, '1.2.0')).toBeNull();
    expect(await publishedRelease(db, listing.id, '2.0.0')).toBeNull();
    expect(await publishedRelease(db, listing.id, 'nonsense')).toBeNull();
    const { releases: between, changes } = await updateOffer(db, listing, '0.9.0', '1.10.0');
    expect(between.map((r) => r.version)).toEqual(['1.0.0', '1.2.0', '1.10.0']);
    expect(between[1]?.scan).toBe('fail');
    expect(changes).toMatchObject({ from: '0.9.0', to: '1.10.0', releases: 3, failing_versions: ['1.2.0'] });
    expect(between[0]).toMatchObject({
      tag: 'v1.0.0',
      scan: 'pass',
      // The listing's prices in force now, on every release.
      price_micro: '999999999999999',
      update_price_micro: listing.updatePriceMicro.toString(),
    });
    expect((await updateOffer(db, listing, '1.0.0', '1.10.0')).releases.map((r) => r.version)).toEqual([
      '1.2.0',
      '1.10.0',
    ]);
  });

  it('streams an artifact from blob storage', async () => {
    const { listing } = await seed('published');
    const release = (await latestPassingRelease(t.ctx.database.db, listing.id))!;
    const { stream, sizeBytes } = await openArtifact(t.ctx, release);
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe('zip 1.10.0');
    expect(sizeBytes).toBe(10);
  });
});
