import {
  and,
  asc,
  count,
  desc,
  eq,
  getTableColumns,
  gt,
  gte,
  inArray,
  isNotNull,
  isNull,
  lt,
  ne,
  notExists,
  notInArray,
  or,
  sql,
} from 'drizzle-orm';
import { type Db, selectRows } from '../db/connect.js';
import { githubDeliveries, listings, releaseCuts, releases, tagChanges } from '../db/schema/index.js';
import { CUT_STAGES, type CutStage } from '../listings/cut-stages.js';
import type { Version } from '../platform/versions.js';

/**
 * A release row without `computed`: that column is the analysis's largest (the file tree is kept
 * apart, in tree-store.ts), and no hot path (the 402, version status, a grant) needs it. The few
 * readers of `computed` ask for the part they need.
 */
export type ReleaseRow = Omit<typeof releases.$inferSelect, 'computed'>;
const { computed: _computed, ...releaseColumns } = getTableColumns(releases);
export type ReleaseCutRow = typeof releaseCuts.$inferSelect;

const versionTuple = sql`(${releases.major}, ${releases.minor}, ${releases.patch})`;
const tuple = (v: Version) => sql`(${v.major}::integer, ${v.minor}::integer, ${v.patch}::integer)`;
const newestFirst = [desc(releases.major), desc(releases.minor), desc(releases.patch)];

export async function findRelease(
  db: Db,
  listingId: string,
  version: string,
): Promise<ReleaseRow | undefined> {
  const [row] = await db
    .select(releaseColumns)
    .from(releases)
    .where(and(eq(releases.listingId, listingId), eq(releases.version, version)));
  return row;
}

/** The highest version, of any verdict or only passing ones. */
export async function newestRelease(
  db: Db,
  listingId: string,
  options: { passing?: boolean } = {},
): Promise<ReleaseRow | undefined> {
  const [row] = await db
    .select(releaseColumns)
    .from(releases)
    .where(
      and(
        eq(releases.listingId, listingId),
        options.passing ? and(eq(releases.verdict, 'pass'), isNull(releases.yankedAt)) : undefined,
      ),
    )
    .orderBy(...newestFirst)
    .limit(1);
  return row;
}

/**
 * The releases from `from` to `to`, both included, oldest first: the update offer reads them on
 * the 402 path.
 */
export async function releasesFromTo(
  db: Db,
  listingId: string,
  from: Version,
  to: Version,
): Promise<ReleaseRow[]> {
  return db
    .select(releaseColumns)
    .from(releases)
    .where(
      and(
        eq(releases.listingId, listingId),
        sql`${versionTuple} >= ${tuple(from)}`,
        sql`${versionTuple} <= ${tuple(to)}`,
      ),
    )
    .orderBy(releases.major, releases.minor, releases.patch);
}

/** Every release, newest version first, below `before` (exclusive). */
export async function releasePage(
  db: Db,
  listingId: string,
  limit: number,
  before?: Version,
): Promise<ReleaseRow[]> {
  return db
    .select(releaseColumns)
    .from(releases)
    .where(
      and(eq(releases.listingId, listingId), before ? sql`${versionTuple} < ${tuple(before)}` : undefined),
    )
    .orderBy(...newestFirst)
    .limit(limit);
}

/** Parts of what the analysis measured (`computed.<part>`) for each release, by id. */
export async function computedParts(
  db: Db,
  releaseIds: string[],
  part: 'licence' | 'originality',
): Promise<Map<string, unknown>> {
  if (releaseIds.length === 0) return new Map();
  const rows = await db
    .select({ id: releases.id, value: sql<unknown>`${releases.computed}->${part}` })
    .from(releases)
    .where(inArray(releases.id, releaseIds));
  return new Map(rows.map((row) => [row.id, row.value]));
}

/** Inserts the release unless one exists for the version already (a retried job); returns the stored row. */
export async function insertRelease(db: Db, row: typeof releases.$inferInsert): Promise<ReleaseRow> {
  await db.insert(releases).values(row).onConflictDoNothing();
  return (await findRelease(db, row.listingId, row.version))!;
}

/**
 * Records that the listing's release on sale (its newest passing release, while it is published)
 * went on sale at `at`, at the listing's prices now, unless it was on sale before: run where a
 * release can become the one on sale (publishing, a passing verdict), in that change's transaction.
 * Returns the version that went on sale now, if one did.
 */
export async function markOnSale(db: Db, listingId: string, at: Date): Promise<string | undefined> {
  const rows = await selectRows<{ version: string }>(
    db,
    sql`
    update ${releases} set on_sale_at = ${at}, on_sale_price_micro = l.price_micro,
      on_sale_update_price_micro = l.update_price_micro
    from ${listings} l
    where l.id = ${listingId} and l.status = 'published' and l.price_micro is not null
      and ${releases.onSaleAt} is null
      and ${releases.id} = (select newest.id from ${releases} newest
        where newest.listing_id = l.id and newest.verdict = 'pass' and newest.yanked_at is null
        order by newest.major desc, newest.minor desc, newest.patch desc limit 1)
    returning ${releases.version}`,
  );
  return rows[0]?.version;
}

/** Records the inspection once: only a `pending` release takes a verdict. */
export async function recordInspection(
  db: Db,
  id: string,
  changes: Pick<
    typeof releases.$inferInsert,
    'verdict' | 'computed' | 'scan' | 'analyzerVersion' | 'scannerVersion' | 'sbomKey' | 'diffSummary'
  >,
): Promise<boolean> {
  const rows = await db
    .update(releases)
    .set(changes)
    .where(and(eq(releases.id, id), eq(releases.verdict, 'pending')))
    .returning({ id: releases.id });
  return rows.length === 1;
}

/** Cuts of the listing claimed at or after `since`, whatever became of them. */
export async function cutsClaimedSince(db: Db, listingId: string, since: Date): Promise<number> {
  const [row] = await db
    .select({ n: count() })
    .from(releaseCuts)
    .where(and(eq(releaseCuts.listingId, listingId), gte(releaseCuts.requestedAt, since)));
  return row?.n ?? 0;
}

/** Bytes of the creator's stored zips, each distinct zip once however many releases share it. */
export async function storedBytesOf(db: Db, creatorId: string): Promise<number> {
  const distinct = db
    .selectDistinct({ sha256: releases.artifactSha256, sizeBytes: releases.sizeBytes })
    .from(releases)
    .innerJoin(listings, eq(listings.id, releases.listingId))
    .where(and(eq(listings.creatorId, creatorId), isNotNull(releases.artifactSha256)))
    .as('distinct_artifacts');
  const [row] = await db
    .select({ bytes: sql<string>`coalesce(sum(${distinct.sizeBytes}), 0)` })
    .from(distinct);
  return Number(row?.bytes ?? 0);
}

/** The stored zip with these bytes, when a release already holds it. */
export async function storedArtifact(
  db: Db,
  sha256: string,
): Promise<{ key: string; sizeBytes: number } | undefined> {
  const [row] = await db
    .select({ key: releases.artifactKey, sizeBytes: releases.sizeBytes })
    .from(releases)
    .where(eq(releases.artifactSha256, sha256))
    .limit(1);
  return row?.key && row.sizeBytes !== null ? { key: row.key, sizeBytes: row.sizeBytes } : undefined;
}

/** Whether one of the creator's releases holds the zip with these bytes (it is counted already). */
export async function creatorHoldsArtifact(db: Db, creatorId: string, sha256: string): Promise<boolean> {
  const [row] = await db
    .select({ id: releases.id })
    .from(releases)
    .innerJoin(listings, eq(listings.id, releases.listingId))
    .where(and(eq(listings.creatorId, creatorId), eq(releases.artifactSha256, sha256)))
    .limit(1);
  return row !== undefined;
}

/** Claims the version for a cut; undefined when it is claimed already. */
export async function insertCut(
  db: Db,
  row: typeof releaseCuts.$inferInsert,
): Promise<ReleaseCutRow | undefined> {
  const [inserted] = await db.insert(releaseCuts).values(row).onConflictDoNothing().returning();
  return inserted;
}

/**
 * Claims the version again through the cut that gave it back (failed because its source refused
 * it): the row is queued anew with this claim's tag, commit and trigger. Undefined when there is no
 * such cut, or when the version has a release (never cut twice). The row's own condition makes
 * this safe against a concurrent claim; callers also hold the creator's lock.
 */
export async function reclaimCut(
  db: Db,
  row: Pick<typeof releaseCuts.$inferInsert, 'listingId' | 'version' | 'tag' | 'commitSha' | 'trigger'> & {
    requestedAt: Date;
  },
): Promise<ReleaseCutRow | undefined> {
  const [reclaimed] = await db
    .update(releaseCuts)
    .set({
      tag: row.tag,
      commitSha: row.commitSha,
      trigger: row.trigger,
      requestedAt: row.requestedAt,
      state: 'queued',
      holdsVersion: true,
      failureReason: null,
      finishedAt: null,
      // A new run of the cut starts from the beginning.
      stage: null,
      stageAt: null,
    })
    .where(
      and(
        eq(releaseCuts.listingId, row.listingId),
        eq(releaseCuts.version, row.version),
        eq(releaseCuts.holdsVersion, false),
        notExists(
          db
            .select({ id: releases.id })
            .from(releases)
            .where(and(eq(releases.listingId, row.listingId), eq(releases.version, row.version))),
        ),
      ),
    )
    .returning();
  return reclaimed;
}

export async function findCut(db: Db, id: string): Promise<ReleaseCutRow | undefined> {
  const [row] = await db.select().from(releaseCuts).where(eq(releaseCuts.id, id));
  return row;
}

/**
 * The versions claimed by a cut of the listing, each with the commit it was claimed at. A cut that
 * gave its version back (failed because its source refused it) claims nothing.
 */
export async function cutVersions(db: Db, listingId: string): Promise<Map<string, string>> {
  const rows = await db
    .select({ version: releaseCuts.version, commitSha: releaseCuts.commitSha })
    .from(releaseCuts)
    .where(and(eq(releaseCuts.listingId, listingId), eq(releaseCuts.holdsVersion, true)));
  return new Map(rows.map((row) => [row.version, row.commitSha]));
}

/**
 * Cuts of the listing other than `exceptId` that did not fail and were not refused: the candidates
 * for "previous release" (a refused tree is never diffed against).
 */
export async function otherCuts(db: Db, listingId: string, exceptId: string): Promise<ReleaseCutRow[]> {
  return db
    .select()
    .from(releaseCuts)
    .where(
      and(
        eq(releaseCuts.listingId, listingId),
        ne(releaseCuts.id, exceptId),
        notInArray(releaseCuts.state, ['failed', 'refused']),
      ),
    );
}

/**
 * Ends a queued cut (a cut that is no longer queued is left as it is). `givesVersionBack` (a
 * failure its source caused) frees the version for a later claim: a queued cut has no release, as
 * a release is written in one transaction with its cut's `cut` or `refused` state.
 */
export async function finishCut(
  db: Db,
  id: string,
  state: 'cut' | 'refused' | 'failed',
  at: Date,
  failureReason?: string,
  options: { givesVersionBack?: boolean } = {},
): Promise<void> {
  await db
    .update(releaseCuts)
    .set({
      state,
      finishedAt: at,
      failureReason: failureReason ?? null,
      holdsVersion: !(state === 'failed' && options.givesVersionBack === true),
    })
    .where(and(eq(releaseCuts.id, id), eq(releaseCuts.state, 'queued')));
}

/**
 * Moves the running cut of `listingId`'s `version` to `stage`, entered `at`, unless it is at that
 * stage or past it already (stages may come to overlap, and a retried job passes them again) or
 * the cut has ended. The cut's natural key, rather than its id, so that the inspection's callers
 * need only the release. True when the stage moved.
 */
export async function markCutStage(
  db: Db,
  cut: { listingId: string; version: string },
  stage: CutStage,
  at: Date,
): Promise<boolean> {
  const earlier = CUT_STAGES.slice(0, CUT_STAGES.indexOf(stage));
  const rows = await db
    .update(releaseCuts)
    .set({ stage, stageAt: at })
    .where(
      and(
        eq(releaseCuts.listingId, cut.listingId),
        eq(releaseCuts.version, cut.version),
        inArray(releaseCuts.state, ['queued', 'cut']),
        earlier.length > 0
          ? or(isNull(releaseCuts.stage), inArray(releaseCuts.stage, earlier))
          : isNull(releaseCuts.stage),
      ),
    )
    .returning({ id: releaseCuts.id });
  return rows.length === 1;
}

/** Where a running cut has got: its stage and when it entered it. */
export interface CutStageRow {
  stage: CutStage;
  at: Date;
}

/** The stage each of these releases' cuts has reached, by release id (releases whose cut has none are left out). */
export async function cutStagesOf(db: Db, releaseIds: string[]): Promise<Map<string, CutStageRow>> {
  if (releaseIds.length === 0) return new Map();
  const rows = await db
    .select({ id: releases.id, stage: releaseCuts.stage, at: releaseCuts.stageAt })
    .from(releases)
    .innerJoin(
      releaseCuts,
      and(eq(releaseCuts.listingId, releases.listingId), eq(releaseCuts.version, releases.version)),
    )
    .where(and(inArray(releases.id, releaseIds), isNotNull(releaseCuts.stage)));
  return new Map(
    rows.flatMap((row) => (row.stage && row.at ? [[row.id, { stage: row.stage, at: row.at }]] : [])),
  );
}

/** Cuts still queued that were requested before `before`: their job may have been lost. */
export async function staleQueuedCuts(db: Db, before: Date, limit: number): Promise<ReleaseCutRow[]> {
  return db
    .select()
    .from(releaseCuts)
    .where(and(eq(releaseCuts.state, 'queued'), lt(releaseCuts.requestedAt, before)))
    .limit(limit);
}

export async function cutsOf(
  db: Db,
  listingId: string,
  states: ReleaseCutRow['state'][],
): Promise<ReleaseCutRow[]> {
  return db
    .select()
    .from(releaseCuts)
    .where(and(eq(releaseCuts.listingId, listingId), inArray(releaseCuts.state, states)));
}

/** For each listing, its highest-version release (of any verdict, or only passing ones). */
export async function newestReleasesOf(
  db: Db,
  listingIds: string[],
  options: { passing?: boolean } = {},
): Promise<Map<string, ReleaseRow>> {
  if (listingIds.length === 0) return new Map();
  const rows = await db
    .selectDistinctOn([releases.listingId], releaseColumns)
    .from(releases)
    .where(
      and(
        inArray(releases.listingId, listingIds),
        options.passing ? and(eq(releases.verdict, 'pass'), isNull(releases.yankedAt)) : undefined,
      ),
    )
    .orderBy(releases.listingId, ...newestFirst);
  return new Map(rows.map((row) => [row.listingId, row]));
}

/** Releases of the listing below `version` that have a zip (refused trees are left out), oldest first. */
export async function releasesBelow(db: Db, listingId: string, version: Version): Promise<ReleaseRow[]> {
  return db
    .select(releaseColumns)
    .from(releases)
    .where(
      and(
        eq(releases.listingId, listingId),
        isNotNull(releases.artifactKey),
        sql`${versionTuple} < ${tuple(version)}`,
      ),
    )
    .orderBy(releases.major, releases.minor, releases.patch);
}

/**
 * The delivery already handled that `delivery` repeats: the same delivery id at any time, or the
 * same content received since `since`. Undefined when it is new.
 */
export async function earlierDelivery(
  db: Db,
  delivery: { deliveryId: string; contentSha256: string; since: Date },
): Promise<string | undefined> {
  const [row] = await db
    .select({ deliveryId: githubDeliveries.deliveryId })
    .from(githubDeliveries)
    .where(
      or(
        eq(githubDeliveries.deliveryId, delivery.deliveryId),
        and(
          eq(githubDeliveries.contentSha256, delivery.contentSha256),
          gte(githubDeliveries.receivedAt, delivery.since),
        ),
      ),
    )
    .orderBy(asc(githubDeliveries.receivedAt))
    .limit(1);
  return row?.deliveryId;
}

/** Records a webhook delivery as handled (once: a concurrent twin's record is kept). */
export async function recordDelivery(db: Db, row: typeof githubDeliveries.$inferInsert): Promise<void> {
  await db.insert(githubDeliveries).values(row).onConflictDoNothing();
}

/** Records that a released tag moved or was deleted; false when this change was recorded already. */
export async function recordTagChange(db: Db, row: typeof tagChanges.$inferInsert): Promise<boolean> {
  const inserted = await db.insert(tagChanges).values(row).onConflictDoNothing().returning();
  return inserted.length > 0;
}

/** The newest tag changes a listing answer shows. */
const TAG_CHANGES_SHOWN = 50;

export function tagChangesOf(db: Db, listingId: string) {
  return db
    .select()
    .from(tagChanges)
    .where(eq(tagChanges.listingId, listingId))
    .orderBy(desc(tagChanges.seenAt))
    .limit(TAG_CHANGES_SHOWN);
}

/**
 * One page of passing releases that have dependencies, by id after `afterId`: the dependency list
 * their analysis found (never the rest of `computed`) and their current advisory flag.
 */
export async function passingReleasesWithDependencies(db: Db, afterId: string | null, limit: number) {
  const dependencies = sql`${releases.computed}->'dependencies'`;
  return db
    .select({
      id: releases.id,
      listingId: releases.listingId,
      version: releases.version,
      owner: listings.owner,
      slug: listings.slug,
      dependencies: sql<unknown>`${dependencies}`,
      advisoryFlag: releases.advisoryFlag,
    })
    .from(releases)
    .innerJoin(listings, eq(listings.id, releases.listingId))
    .where(
      and(
        eq(releases.verdict, 'pass'),
        sql`coalesce(${dependencies}, '[]'::jsonb) <> '[]'::jsonb`,
        afterId ? gt(releases.id, afterId) : undefined,
      ),
    )
    .orderBy(releases.id)
    .limit(limit);
}

/** The newest passing release above `version` that carries no advisory flag: what a flagged holder moves to. */
export async function newestUnflaggedAbove(
  db: Db,
  listingId: string,
  version: Version,
): Promise<string | undefined> {
  const [row] = await db
    .select({ version: releases.version })
    .from(releases)
    .where(
      and(
        eq(releases.listingId, listingId),
        eq(releases.verdict, 'pass'),
        isNull(releases.advisoryFlag),
        sql`(${releases.major}, ${releases.minor}, ${releases.patch}) > (${version.major}, ${version.minor}, ${version.patch})`,
      ),
    )
    .orderBy(desc(releases.major), desc(releases.minor), desc(releases.patch))
    .limit(1);
  return row?.version;
}

export async function setAdvisoryFlag(
  db: Db,
  id: string,
  flag: { advisoryFlag: unknown; advisoryFlaggedAt: Date | null },
): Promise<void> {
  await db.update(releases).set(flag).where(eq(releases.id, id));
}

/** Those of `versions` that carry an advisory flag, oldest first. */
export async function flaggedReleasesOf(db: Db, listingId: string, versions: string[]) {
  if (versions.length === 0) return [];
  return db
    .select({
      version: releases.version,
      advisoryFlag: releases.advisoryFlag,
      advisoryFlaggedAt: releases.advisoryFlaggedAt,
    })
    .from(releases)
    .where(
      and(
        eq(releases.listingId, listingId),
        inArray(releases.version, versions),
        isNotNull(releases.advisoryFlag),
      ),
    )
    .orderBy(releases.major, releases.minor, releases.patch);
}

/** A page of releases whose verdict is recorded, by id after `afterId` (the attestation backfill walks them). */
export async function finalReleasesAfter(
  db: Db,
  afterId: string | null,
  limit: number,
): Promise<ReleaseRow[]> {
  return db
    .select(releaseColumns)
    .from(releases)
    .where(and(ne(releases.verdict, 'pending'), afterId ? gt(releases.id, afterId) : undefined))
    .orderBy(releases.id)
    .limit(limit);
}

/** The yanked releases among `versions` of a listing, oldest first: what a holder is told it owns. */
export async function yankedReleasesOf(
  db: Db,
  listingId: string,
  versions: string[],
): Promise<Array<{ version: string; yankedAt: Date; yankReason: string | null }>> {
  if (versions.length === 0) return [];
  const rows = await db
    .select({ version: releases.version, yankedAt: releases.yankedAt, yankReason: releases.yankReason })
    .from(releases)
    .where(
      and(
        eq(releases.listingId, listingId),
        inArray(releases.version, versions),
        isNotNull(releases.yankedAt),
      ),
    )
    .orderBy(asc(releases.major), asc(releases.minor), asc(releases.patch));
  return rows.map((row) => ({ ...row, yankedAt: row.yankedAt! }));
}

/** Yanks the release (or, with `null`, restores it) unless it is so already; its id, or undefined. */
export async function setYank(
  db: Db,
  listingId: string,
  version: string,
  yank: { at: Date; reason: string } | null,
): Promise<{ id: string } | undefined> {
  const [row] = await db
    .update(releases)
    .set({ yankedAt: yank?.at ?? null, yankReason: yank?.reason ?? null })
    .where(
      and(
        eq(releases.listingId, listingId),
        eq(releases.version, version),
        yank ? isNull(releases.yankedAt) : isNotNull(releases.yankedAt),
      ),
    )
    .returning({ id: releases.id });
  return row;
}
