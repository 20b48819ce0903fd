import { createHash } from 'node:crypto';
import type { AppContext } from '../src/context.js';
import { insertCreator } from '../src/identity/store.js';
import { insertListing } from '../src/listings/store.js';
import { inspectRelease } from '../src/releases/inspection/inspect.js';
import { insertRelease } from '../src/releases/store.js';
import { FixtureRepo } from '../test/support/fixture-repo.js';

/**
 * A published listing with a realistic manifest: a real repository of 400 source files, a README
 * and 40 dependencies, zipped and inspected by the real analysis and scan, then written straight to
 * the database, so the label benchmark measures serving, not cutting.
 */
export async function seedBenchListing(ctx: AppContext, now: Date): Promise<{ owner: string; slug: string }> {
  const db = ctx.database.db;
  const owner = 'bench-creator';
  const slug = 'bench-tool';
  const version = '1.0.0';
  const creator = (await insertCreator(db, {
    handle: owner,
    payoutAddress: '0x00000000000000000000000000000000000000b1',
    abuseContact: 'abuse@example.com',
    acceptedTermsVersion: 'bench',
    createdAt: now,
  }))!;
  const listing = (await insertListing(db, {
    creatorId: creator.id,
    owner,
    slug,
    source: 'hosted',
    status: 'published',
    priceMicro: 9_000_000n,
    updatePriceMicro: 0n,
    description: 'Release notes from commits, for agents',
    triggerHint: 'When a tag is pushed',
    createdAt: now,
    publishedAt: now,
  }))!;

  const files: Record<string, string> = {
    'README.md': `# bench-tool\n\n${'A paragraph of README text for the benchmark, with `code` and *emphasis*.\n\n'.repeat(60)}`,
    'package.json': JSON.stringify(
      {
        name: slug,
        version,
        dependencies: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`dep-${i}`, '^1.0.0'])),
      },
      null,
      2,
    ),
  };
  for (let i = 0; i < 400; i++) {
    files[`src/module-${Math.floor(i / 20)}/file-${i}.ts`] =
      `export function f${i}(x: number): number {\n  return x * ${i} + ${i % 7};\n}\n`.repeat(10);
  }
  const repo = await FixtureRepo.create();
  try {
    const { zip, commit } = await repo.commit(slug, version, files);
    const inspection = await inspectRelease(
      ctx,
      {
        repoPath: repo.dir,
        commit,
        listing: { id: listing.id, owner, slug },
        version,
        publishedAt: now,
        previous: [],
      },
      { workers: 0 },
    );
    const key = `bench/${listing.id}/${version}.zip`;
    await ctx.blobs.putBytes(key, zip, 'application/zip');
    await insertRelease(db, {
      listingId: listing.id,
      version,
      major: 1,
      minor: 0,
      patch: 0,
      tag: `v${version}`,
      commitSha: commit,
      artifactKey: key,
      artifactSha256: createHash('sha256').update(zip).digest('hex'),
      sizeBytes: zip.length,
      publishedAt: now,
      changelog: 'First release',
      diffSummary: inspection.diffSummary,
      verdict: inspection.verdict,
      computed: inspection.computed,
      scan: inspection.scan,
      analyzerVersion: inspection.analyzerVersion,
      scannerVersion: inspection.scannerVersion,
      priceMicro: 9_000_000n,
      updatePriceMicro: 0n,
    });
  } finally {
    await repo.remove();
  }
  return { owner, slug };
}
