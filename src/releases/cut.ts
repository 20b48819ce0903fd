import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { AppContext } from '../context.js';
import { annotatedTagMessage, commitSubjects, diffFiles } from '../git/refs.js';
import { repoPath } from '../git/repos.js';
import { type Listing, listingById } from '../listings/service.js';
import { isAppError } from '../platform/errors.js';
import { announceListingChanged } from '../platform/listing-events.js';
import { buildArtifact } from './artifact.js';
import { RELEASE_INSPECTOR } from './inspection.js';
import { assertWithinLimits } from './limits.js';
import {
  findCut,
  findRelease,
  finishCut,
  insertRelease,
  otherCuts,
  type ReleaseCutRow,
  type ReleaseRow,
  recordInspection,
  releasesBelow,
} from './store.js';
import { compareVersions, parseVersion } from './versions.js';
import type { ReleaseBody } from './views.js';

/**
 * The one release cut, whatever triggered it (a pushed tag or sync). Each step is idempotent, so
 * a job that crashes is simply run again: the snapshot is recorded with its release in one
 * transaction (a retry finds it and skips ahead), and the inspection is recorded only while the
 * release is `pending`. On the last attempt a cut that never produced a release is marked
 * `failed` with the reason.
 */
export async function runCut(
  ctx: AppContext,
  cutId: string,
  options: { finalAttempt: boolean },
): Promise<void> {
  const db = ctx.database.db;
  const cut = await findCut(db, cutId);
  if (!cut || cut.state === 'failed') return;
  const listing = await listingById(db, cut.listingId);
  if (!listing) return;
  const gitDir = repoPath(ctx.config, listing.owner, listing.slug);
  try {
    const release =
      (await findRelease(db, listing.id, cut.version)) ?? (await snapshot(ctx, listing, cut, gitDir));
    if (release?.verdict === 'pending') await inspect(ctx, listing, release, gitDir);
  } catch (error) {
    if (!options.finalAttempt) throw error;
    ctx.log.error({ err: error, cutId, version: cut.version }, 'release cut failed for good');
    await finishCut(
      db,
      cut.id,
      'failed',
      ctx.clock.now(),
      `internal: ${(error as Error).message}`.slice(0, 1000),
    );
  }
}

/** Zips the commit into blob storage and records the release as `pending`; null when the cut is refused. */
async function snapshot(
  ctx: AppContext,
  listing: Listing,
  cut: ReleaseCutRow,
  gitDir: string,
): Promise<ReleaseRow | null> {
  const db = ctx.database.db;
  try {
    await assertWithinLimits(gitDir, cut.commitSha);
  } catch (error) {
    if (!isAppError(error)) throw error;
    await finishCut(db, cut.id, 'failed', ctx.clock.now(), `${error.code}: ${error.message}`);
    return null;
  }
  const previous = await previousCut(ctx, cut);
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'repo402-cut-'));
  try {
    const zip = path.join(tmp, 'artifact.zip');
    // Built off the event loop; identical trees give identical bytes under the `<slug>/` folder.
    const { sha256, sizeBytes: size } = await buildArtifact(
      { gitDir, commit: cut.commitSha, prefix: `${listing.slug}/`, outFile: zip },
      { timeoutMs: ctx.config.cutWorkerTimeoutMs },
    );
    const artifactKey = `releases/${listing.id}/${cut.version}/${listing.slug}-${cut.version}.zip`;
    await ctx.blobs.putFile(artifactKey, zip, 'application/zip');
    const changelog = await changelogFor(gitDir, cut, previous);
    const diffSummary = summarise(await diffFiles(gitDir, previous?.commitSha, cut.commitSha));
    return await db.transaction(async (tx) => {
      const release = await insertRelease(tx, {
        listingId: listing.id,
        version: cut.version,
        ...parseVersion(cut.version)!,
        tag: cut.tag,
        commitSha: cut.commitSha,
        artifactKey,
        artifactSha256: sha256,
        sizeBytes: size,
        publishedAt: ctx.clock.now(),
        changelog,
        diffSummary,
        priceMicro: listing.priceMicro,
        updatePriceMicro: listing.updatePriceMicro,
      });
      await finishCut(tx, cut.id, 'cut', ctx.clock.now());
      return release;
    });
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

/** The highest version below this one that was cut or is being cut (jobs may run out of order). */
async function previousCut(ctx: AppContext, cut: ReleaseCutRow): Promise<ReleaseCutRow | undefined> {
  const lower = (await otherCuts(ctx.database.db, cut.listingId, cut.id)).filter(
    (other) => compareVersions(other.version, cut.version) < 0,
  );
  return lower.sort((a, b) => compareVersions(b.version, a.version))[0];
}

/** The annotated tag's message, else the subjects of the commits since the previous release. */
async function changelogFor(
  gitDir: string,
  cut: ReleaseCutRow,
  previous: ReleaseCutRow | undefined,
): Promise<string> {
  const message = await annotatedTagMessage(gitDir, cut.tag);
  if (message) return message;
  const subjects = await commitSubjects(gitDir, cut.commitSha, previous?.commitSha);
  return subjects.map((subject) => `- ${subject}`).join('\n');
}

function summarise(changes: Awaited<ReturnType<typeof diffFiles>>): NonNullable<ReleaseBody['diff_summary']> {
  const components = new Set(
    changes.map((change) => (change.path.includes('/') ? change.path.split('/')[0]! : '.')),
  );
  return {
    files_added: changes.filter((change) => change.status === 'A').length,
    files_changed: changes.filter((change) => change.status === 'M').length,
    files_removed: changes.filter((change) => change.status === 'D').length,
    additions: changes.reduce((sum, change) => sum + change.additions, 0),
    deletions: changes.reduce((sum, change) => sum + change.deletions, 0),
    components_touched: [...components].sort(),
  };
}

async function inspect(
  ctx: AppContext,
  listing: Listing,
  release: ReleaseRow,
  gitDir: string,
): Promise<void> {
  const previous = await releasesBelow(ctx.database.db, listing.id, parseVersion(release.version)!);
  const result = await RELEASE_INSPECTOR(ctx, {
    repoPath: gitDir,
    commit: release.commitSha,
    listing: { id: listing.id, owner: listing.owner, slug: listing.slug },
    version: release.version,
    publishedAt: release.publishedAt,
    previous: previous.map((row) => ({
      version: row.version,
      commitSha: row.commitSha,
      publishedAt: row.publishedAt,
    })),
  });
  let sbomKey: string | null = null;
  if (result.sbom !== null) {
    sbomKey = `releases/${listing.id}/${release.version}/sbom.json`;
    await ctx.blobs.putBytes(sbomKey, Buffer.from(result.sbom, 'utf8'), 'application/json');
  }
  const recorded = await recordInspection(ctx.database.db, release.id, {
    verdict: result.verdict,
    computed: result.computed,
    scan: result.scan,
    analyzerVersion: result.analyzerVersion,
    scannerVersion: result.scannerVersion,
    sbomKey,
    diffSummary: result.diffSummary ?? release.diffSummary,
  });
  // A new passing release changes what the listing's public documents show.
  if (recorded) announceListingChanged(listing.owner, listing.slug);
}
