import { createHash } from 'node:crypto';
import path from 'node:path';
import { listingById } from '../../src/listings/service.js';
import { insertListing, updateListing } from '../../src/listings/store.js';
import { parseVersion } from '../../src/platform/versions.js';
import { recordAttested } from '../../src/releases/cut/attest.js';
import { inspectRelease } from '../../src/releases/inspection/inspect.js';
import { encodeTreeParts } from '../../src/releases/inspection/tree-analysis.js';
import { insertRelease, markOnSale } from '../../src/releases/store.js';
import { recordReleaseTree } from '../../src/releases/tree-store.js';
import { type RegisteredCreator, registerCreator } from '../identity/support.js';
import type { TestApp } from './app.js';
import { FixtureRepo } from './fixture-repo.js';

export interface FixtureRelease {
  version: string;
  files?: Record<string, string>;
  /** Overrides the real inspection's verdict (a failing release without planting a secret). */
  verdict?: 'pass' | 'fail' | 'pending';
  /** Replaces the real inspection's documents (pages that need particular values). */
  computed?: Record<string, unknown> & { tree?: unknown[] };
  scan?: Record<string, unknown>;
}

export interface PublishedFixture {
  creator: RegisteredCreator;
  listingId: string;
  owner: string;
  slug: string;
  /** The zip of each release, by version. */
  zips: Map<string, { bytes: Buffer; sha256: string }>;
}

/**
 * TEST FIXTURE: a published listing whose releases are written straight to the database, each
 * with a real zip (the cut's own builder) in the blob store and the real analysis and scan of its files,
 * for routes that read listings (manifest, buying) without going through a push.
 */
export async function publishedListingFixture(
  t: TestApp,
  options: {
    slug?: string;
    priceMicro?: bigint;
    updatePriceMicro?: bigint;
    description?: string;
    triggerHint?: string;
    status?: 'published' | 'retired' | 'draft';
    releases?: FixtureRelease[];
    creator?: RegisteredCreator;
  } = {},
): Promise<PublishedFixture> {
  const creator = options.creator ?? (await registerCreator(t));
  const slug = options.slug ?? `fixture-${Math.random().toString(36).slice(2, 8)}`;
  const now = t.clock.now();
  const listing = (await insertListing(t.ctx.database.db, {
    creatorId: creator.id,
    owner: creator.handle,
    slug,
    source: 'hosted',
    status: options.status ?? 'published',
    priceMicro: options.priceMicro ?? 1_000_000n,
    updatePriceMicro: options.updatePriceMicro ?? 0n,
    description: options.description ?? 'A fixture listing',
    triggerHint: options.triggerHint ?? 'Use it when testing',
    createdAt: now,
    publishedAt: options.status === 'draft' ? null : now,
  }))!;
  const fixture: PublishedFixture = {
    creator,
    listingId: listing.id,
    owner: creator.handle,
    slug,
    zips: new Map(),
  };
  await addFixtureReleases(t, fixture, options.releases ?? [{ version: '1.0.0' }]);
  return fixture;
}

/**
 * TEST FIXTURE: adds releases to a fixture listing, in order, at the listing's current prices;
 * each commits its files on top of the previous one in the call and is zipped and inspected for real.
 */
export async function addFixtureReleases(
  t: TestApp,
  fixture: PublishedFixture,
  releases: FixtureRelease[],
): Promise<void> {
  const listing = (await listingById(t.ctx.database.db, fixture.listingId))!;
  const now = t.clock.now();
  const previous: Array<{ version: string; commitSha: string; publishedAt: Date }> = [];
  const repo = await FixtureRepo.create();
  try {
    for (const release of releases) {
      const files = release.files ?? { 'README.md': `# ${fixture.slug}\n\nA fixture listing.\n` };
      const { zip, commit } = await repo.commit(fixture.slug, release.version, files);
      const inspection = await inspectRelease(
        t.ctx,
        {
          repoPath: repo.dir,
          commit,
          listing: { id: listing.id, owner: listing.owner, slug: listing.slug },
          version: release.version,
          publishedAt: now,
          previous: [...previous],
        },
        { workers: 0 },
      );
      const key = `fixtures/${listing.id}/${release.version}.zip`;
      await t.ctx.blobs.putBytes(key, zip, 'application/zip');
      const sha256 = createHash('sha256').update(zip).digest('hex');
      // A fixture's own computed may carry its tree, which a cut stores apart, as here.
      const { tree = [], ...fixtureComputed } = release.computed ?? {};
      const computed = release.computed ? fixtureComputed : inspection.computed;
      const row = {
        listingId: listing.id,
        version: release.version,
        ...parseVersion(release.version)!,
        tag: `v${release.version}`,
        commitSha: commit,
        artifactKey: key,
        artifactSha256: sha256,
        sizeBytes: zip.length,
        publishedAt: now,
        changelog: `Release ${release.version}`,
        diffSummary: inspection.diffSummary,
        verdict: release.verdict ?? inspection.verdict,
        computed,
        scan: release.scan ? { ...inspection.scan, ...release.scan } : inspection.scan,
        analyzerVersion: inspection.analyzerVersion,
        scannerVersion: inspection.scannerVersion,
      };
      const verdict = row.verdict;
      // Like a cut: a release whose verdict is final is attested in the transaction that writes it.
      const inserted =
        verdict === 'pending'
          ? await insertRelease(t.ctx.database.db, row)
          : await recordAttested(
              t.ctx,
              listing,
              path.join(repo.dir, '.git'),
              commit,
              { ...row, verdict },
              async (tx) => {
                const written = await insertRelease(tx, row);
                // Like a passing cut: the release may be the listing's new one on sale.
                if (verdict === 'pass') await markOnSale(tx, listing.id, now);
                return written;
              },
            );
      await recordReleaseTree(
        t.ctx.database.db,
        inserted!.id,
        release.computed ? encodeTreeParts(tree) : inspection.treeParts,
      );
      previous.push({ version: release.version, commitSha: commit, publishedAt: now });
      fixture.zips.set(release.version, { bytes: zip, sha256 });
    }
  } finally {
    await repo.remove();
  }
  t.ctx.listingEvents.announce(listing.owner, listing.slug);
}

/** Changes listing fields the way PATCH does, announcing the change as the listings service does (test fixture). */
export async function patchListingFixture(
  t: TestApp,
  id: string,
  changes: Parameters<typeof updateListing>[2],
) {
  const row = (await updateListing(t.ctx.database.db, id, changes))!;
  t.ctx.listingEvents.announce(row.owner, row.slug);
  return row;
}

/** A computed namespace and public scan with every field the manifest page shows. */
export const PAGE_COMPUTED = {
  artifact_class: 'Toolkit',
  component_inventory: [
    { kind: 'skill', count: 2 },
    { kind: 'script', count: 1 },
  ],
  file_count: 3,
  lines_of_code: 120,
  languages: { TypeScript: 900, Markdown: 200 },
  tree: [
    { path: 'README.md', size: 200, binary: false },
    { path: 'src/index.ts', size: 900, binary: false },
    { path: 'logo.png', size: 1200, binary: true },
  ],
  readme_html: '<h1>Fixture tool</h1><p>Does <strong>useful</strong> things.</p>',
  licence: { spdx: 'MIT', verdict: 'resale_ok' },
  inventory_sentence: 'Two skills and one script.',
};

export const PAGE_SCAN = {
  verdict: 'pass',
  counts: { blocking: 0, disclosed: 2, review: 1 },
  capabilities: { summary: 'Runs git; reads GITHUB_TOKEN; talks to api.github.com.' },
};
