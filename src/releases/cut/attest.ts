import { z } from 'zod';
import { attestationSigningKey, attestedReleases, attestRelease } from '../../attestations/service.js';
import type { ReleaseFacts } from '../../attestations/statement.js';
import type { AppContext } from '../../context.js';
import type { Db } from '../../db/connect.js';
import { resolveTree } from '../../git/refs.js';
import { repoPath } from '../../git/repos.js';
import { type Listing, listingById } from '../../listings/service.js';
import { computedParts, finalReleasesAfter, type ReleaseRow } from '../store.js';

/** What a release's verdict records, as `recordInspection` (and a refused `insertRelease`) store it. */
export interface VerdictRecord {
  verdict: 'pass' | 'fail';
  /** The scan report (`ScanReport`); read through `ScanParts`, as stored documents are. */
  scan: unknown;
  computed: unknown;
  analyzerVersion: string | null;
  scannerVersion: string | null;
  diffSummary: unknown;
}

/** The parts of the stored scan report and analysis a statement records; absent parts are null. */
const ScanParts = z.object({
  counts: z
    .object({ blocking: z.number(), disclosed: z.number(), review: z.number() })
    .nullable()
    .catch(null),
  checks: z
    .array(
      z.object({
        id: z.string(),
        tool: z.string(),
        tool_version: z.string(),
        status: z.string(),
        findings: z.number(),
      }),
    )
    .catch([]),
});
const ComputedParts = z.object({
  licence: z.object({ spdx: z.string(), verdict: z.string() }).nullable().catch(null),
});

/**
 * Runs `record` (the write that makes a release's verdict final: recording its inspection, or
 * inserting a release refused for a limit) and attests that release in the same transaction, so
 * no release is ever final without its signed statement. `record` answers the release it made
 * final, or undefined when another run recorded the verdict first (that run attested it). The key
 * and the tree are read before the transaction opens (a file, a git process).
 */
export async function recordAttested(
  ctx: AppContext,
  listing: Listing,
  gitDir: string,
  commitSha: string,
  verdict: VerdictRecord,
  record: (tx: Db) => Promise<ReleaseRow | undefined>,
): Promise<ReleaseRow | undefined> {
  const key = await attestationSigningKey(ctx);
  const treeSha = (await resolveTree(gitDir, commitSha)) ?? null;
  return ctx.database.db.transaction(async (tx) => {
    const release = await record(tx);
    if (!release) return undefined;
    const facts = releaseFacts(ctx, listing, release, treeSha, verdict);
    await attestRelease(tx, key, release.id, facts, ctx.clock.now());
    return release;
  });
}

function releaseFacts(
  ctx: AppContext,
  listing: Listing,
  release: ReleaseRow,
  treeSha: string | null,
  record: VerdictRecord,
): ReleaseFacts {
  return {
    baseUrl: ctx.config.baseUrl,
    listing: { id: listing.id, owner: listing.owner, slug: listing.slug, source: listing.source },
    version: release.version,
    tag: release.tag,
    commitSha: release.commitSha,
    treeSha,
    cutAt: release.publishedAt,
    artifact:
      release.artifactSha256 !== null && release.sizeBytes !== null
        ? { sha256: release.artifactSha256, sizeBytes: release.sizeBytes }
        : null,
    scan: {
      verdict: record.verdict,
      scannerVersion: record.scannerVersion,
      ...ScanParts.parse(record.scan ?? {}),
    },
    analyzerVersion: record.analyzerVersion,
    licence: ComputedParts.parse(record.computed ?? {}).licence,
    diffSummary: record.diffSummary,
  };
}

const BACKFILL_PAGE = 100;

/**
 * Attests the releases whose verdict was recorded before attestations existed (an upgrade), from
 * what their rows recorded then; `repo402 attestations backfill` runs it once after upgrading. A
 * release attested meanwhile is left as it is. The tree is read from the repository when this
 * process holds it (the git host), else recorded as null.
 */
export async function attestUnattestedReleases(ctx: AppContext): Promise<{ attested: number }> {
  const db = ctx.database.db;
  let attested = 0;
  let after: string | null = null;
  for (;;) {
    const page = await finalReleasesAfter(db, after, BACKFILL_PAGE);
    const done = await attestedReleases(
      db,
      page.map((row) => row.id),
    );
    const missing = page.filter((row) => !done.has(row.id));
    const licences = await computedParts(
      db,
      missing.map((row) => row.id),
      'licence',
    );
    for (const release of missing) {
      const listing = (await listingById(db, release.listingId))!;
      const verdict: VerdictRecord = {
        verdict: release.verdict as 'pass' | 'fail',
        scan: release.scan,
        computed: { licence: licences.get(release.id) ?? null },
        analyzerVersion: release.analyzerVersion,
        scannerVersion: release.scannerVersion,
        diffSummary: release.diffSummary,
      };
      const gitDir = repoPath(ctx.config, listing.owner, listing.slug);
      const made = await recordAttested(ctx, listing, gitDir, release.commitSha, verdict, async (tx) =>
        (await attestedReleases(tx, [release.id])).size === 0 ? release : undefined,
      );
      if (made) attested += 1;
    }
    if (page.length < BACKFILL_PAGE) return { attested };
    after = page.at(-1)!.id;
  }
}
