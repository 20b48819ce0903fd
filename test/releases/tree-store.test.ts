import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MIGRATIONS_DIR } from '../../src/db/migrate.js';
import { listings, releases, releaseTreeParts } from '../../src/db/schema/index.js';
import { encodeTreeParts, TREE_PART_FILES } from '../../src/releases/inspection/tree-analysis.js';
import { recordReleaseTree, releaseTree } from '../../src/releases/tree-store.js';
import { registerCreator } from '../identity/support.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { BACKENDS } from '../support/db.js';

const files = (n: number, tag = 'f') =>
  Array.from({ length: n }, (_, i) => ({ path: `src/${tag}${i}.ts`, size: i, binary: i % 7 === 0 }));

describe.each(BACKENDS)('release file trees on %s', (backend) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({ backend });
  });
  afterEach(async () => {
    await t.close();
  });

  async function seedRelease(computed: unknown = null): Promise<string> {
    const creator = await registerCreator(t);
    const db = t.ctx.database.db;
    const [listing] = await db
      .insert(listings)
      .values({
        creatorId: creator.id,
        owner: creator.handle,
        slug: 'tree-kit',
        source: 'hosted',
        status: 'draft',
        updatePriceMicro: 0n,
        createdAt: t.clock.now(),
      })
      .returning();
    const [release] = await db
      .insert(releases)
      .values({
        listingId: listing!.id,
        version: '1.0.0',
        major: 1,
        minor: 0,
        patch: 0,
        tag: 'v1.0.0',
        commitSha: 'a'.repeat(40),
        publishedAt: t.clock.now(),
        changelog: '',
        verdict: 'fail',
        computed,
      })
      .returning();
    return release!.id;
  }

  const partsOf = async (releaseId: string) =>
    (
      await t.ctx.database.db
        .select({ part: releaseTreeParts.part, files: releaseTreeParts.files })
        .from(releaseTreeParts)
        .where(eq(releaseTreeParts.releaseId, releaseId))
        .orderBy(releaseTreeParts.part)
    ).map((row) => ({ part: row.part, count: (row.files as unknown[]).length }));

  it('stores a tree in parts of at most 1,000 files and reads it back in tree order', async () => {
    const id = await seedRelease();
    const tree = files(2 * TREE_PART_FILES + 500);
    await recordReleaseTree(t.ctx.database.db, id, encodeTreeParts(tree));
    expect(await partsOf(id)).toEqual([
      { part: 0, count: 1000 },
      { part: 1, count: 1000 },
      { part: 2, count: 500 },
    ]);
    expect(await releaseTree(t.ctx.database.db, id)).toEqual(tree);
  });

  it('reads a tree of exactly a whole number of reads, and an empty one', async () => {
    const whole = await seedRelease();
    const tree = files(4 * TREE_PART_FILES);
    await recordReleaseTree(t.ctx.database.db, whole, encodeTreeParts(tree));
    expect(await releaseTree(t.ctx.database.db, whole)).toEqual(tree);
    await recordReleaseTree(t.ctx.database.db, whole, encodeTreeParts([]));
    expect(await partsOf(whole)).toEqual([]);
    expect(await releaseTree(t.ctx.database.db, whole)).toEqual([]);
  });

  it('records a retried tree again: same parts for the same tree, none left over from a longer one', async () => {
    const id = await seedRelease();
    await recordReleaseTree(t.ctx.database.db, id, encodeTreeParts(files(2500, 'old')));
    await recordReleaseTree(t.ctx.database.db, id, encodeTreeParts(files(1200, 'new')));
    expect(await partsOf(id)).toEqual([
      { part: 0, count: 1000 },
      { part: 1, count: 200 },
    ]);
    expect(await releaseTree(t.ctx.database.db, id)).toEqual(files(1200, 'new'));
  });

  it('moves trees recorded inside computed into parts when the migration runs', async () => {
    const tree = files(2100);
    const id = await seedRelease({ file_count: 2100, tree, languages: { TypeScript: 1 } });
    const untouched = await seedRelease(null);
    const sql = await readFile(path.join(MIGRATIONS_DIR, '0015_release_tree_parts.sql'), 'utf8');
    // The data statements: the table exists already (the test database is fully migrated).
    for (const statement of sql.split('--> statement-breakpoint').slice(2))
      await t.ctx.database.query(statement);
    expect(await partsOf(id)).toEqual([
      { part: 0, count: 1000 },
      { part: 1, count: 1000 },
      { part: 2, count: 100 },
    ]);
    expect(await releaseTree(t.ctx.database.db, id)).toEqual(tree);
    const [row] = await t.ctx.database.db
      .select({ computed: releases.computed })
      .from(releases)
      .where(eq(releases.id, id));
    expect(row?.computed).toEqual({ file_count: 2100, languages: { TypeScript: 1 } });
    expect(await partsOf(untouched)).toEqual([]);
  });
});
