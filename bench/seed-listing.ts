import { createHash } from 'node:crypto';
import type { Db } from '../src/db/connect.js';
import { insertCreator } from '../src/identity/creator-store.js';
import { insertListing } from '../src/listings/store.js';
import { insertRelease } from '../src/releases/store.js';

/**
 * A published listing with a realistic manifest (a 400-file tree, a README, dependencies), written
 * straight to the database so the label benchmark measures serving, not cutting.
 */
export async function seedBenchListing(db: Db, now: Date): Promise<{ owner: string; slug: string }> {
  const owner = 'bench-creator';
  const slug = 'bench-tool';
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
  const tree = Array.from({ length: 400 }, (_, i) => ({
    path: `src/module-${Math.floor(i / 20)}/file-${i}.ts`,
    size: 1000 + i,
    binary: false,
  }));
  await insertRelease(db, {
    listingId: listing.id,
    version: '1.0.0',
    major: 1,
    minor: 0,
    patch: 0,
    tag: 'v1.0.0',
    commitSha: createHash('sha1').update('bench').digest('hex'),
    artifactKey: 'bench/1.0.0.zip',
    artifactSha256: createHash('sha256').update('bench').digest('hex'),
    sizeBytes: 1_000_000,
    publishedAt: now,
    changelog: 'First release',
    verdict: 'pass',
    computed: {
      artifact_class: 'Toolkit',
      file_count: tree.length,
      tree,
      languages: { TypeScript: 400_000 },
      readme_html: `<h1>bench-tool</h1>${'<p>Paragraph of README text for the benchmark.</p>'.repeat(60)}`,
      dependencies: Array.from({ length: 40 }, (_, i) => ({
        ecosystem: 'npm',
        name: `dep-${i}`,
        version: '1.0.0',
        direct: true,
        dev: false,
      })),
    },
    scan: { verdict: 'pass', counts: { blocking: 0, disclosed: 0, review: 0 } },
    analyzerVersion: 'bench',
    scannerVersion: 'bench',
    priceMicro: 9_000_000n,
    updatePriceMicro: 0n,
  });
  return { owner, slug };
}
