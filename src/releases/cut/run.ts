import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { AppContext } from '../../context.js';
import { annotatedTagMessage, commitSubjects, resolveCommit } from '../../git/refs.js';
import { repoPath } from '../../git/repos.js';
import { lockCreator } from '../../identity/creators.js';
import { type Listing, listingById } from '../../listings/service.js';
import type { AppError } from '../../platform/errors.js';
import { logEvent } from '../../platform/events.js';
import { compareVersions, parseVersion } from '../../platform/versions.js';
import { SCANNER_VERSION } from '../../scan/report.js';
import { announceWebhookEvents } from '../../webhooks/events.js';
import { hostingMeta } from '../hosting.js';
import {
  findCut,
  findRelease,
  finishCut,
  insertRelease,
  markOnSale,
  otherCuts,
  type ReleaseCutRow,
  type ReleaseRow,
  recordInspection,
  releasesBelow,
  storedArtifact,
} from '../store.js';
import { recordReleaseTree } from '../tree-store.js';
import { enqueueVerdictEvents } from '../webhook-events.js';
import { buildArtifact } from './artifact.js';
import { recordAttested, type VerdictRecord } from './attest.js';
import { fetchEarlierZip } from './earlier-zip.js';
import { assertArtifactFits, assertWithinLimits, isRefusal, treeLimits } from './limits.js';
import { refusalReport } from './refusal.js';
import { fetchCutCommit, isSourceRefusal } from './sources.js';
import { enterCutStage } from './stage.js';

type InspectResult = Awaited<ReturnType<AppContext['inspectRelease']>>;

/** A changelog is what a buyer reads in the log, not a creator's megabytes of tag message. */
const MAX_CHANGELOG_CHARS = 20_000;

/** Where a zip is stored: by the SHA-256 of its bytes, so identical zips are stored once. */
function artifactKeyOf(sha256: string): string {
  return `artifacts/sha256/${sha256}.zip`;
}

/**
 * The one release cut, whatever triggered it (a pushed tag or sync). Each step is idempotent, so
 * a job that crashes is simply run again: the snapshot is recorded with its release in one
 * transaction (a retry finds it and skips ahead), and the inspection is recorded only while the
 * release is `pending`.
 *
 * A tree or zip past a limit is refused at once, on the first attempt: the release is recorded
 * as failing, with no zip, and the job succeeds (retrying could not change the answer). Any other
 * error is retried; after the last attempt a cut that never produced a release is marked `failed`
 * with a reason that names no server path (the log has the error).
 */
export async function runCut(
  ctx: AppContext,
  cutId: string,
  options: { finalAttempt: boolean },
): Promise<void> {
  const db = ctx.database.db;
  const cut = await findCut(db, cutId);
  if (!cut || cut.state === 'failed' || cut.state === 'refused') return;
  const listing = await listingById(db, cut.listingId);
  if (!listing) return;
  const gitDir = repoPath(ctx.config, listing.owner, listing.slug);
  try {
    let release = await findRelease(db, listing.id, cut.version);
    let analysis: Promise<InspectResult> | undefined;
    if (!release) {
      await enterCutStage(ctx, listing, cut.version, 'snapshot');
      const publishedAt = ctx.clock.now();
      release = await snapshot(ctx, listing, cut, gitDir, publishedAt, () => {
        // The tree is within the limits: its analysis runs beside the zip, on the other cores.
        analysis = analyse(ctx, listing, cut.version, cut.commitSha, publishedAt, gitDir);
        // Awaited by the inspection below, or dropped with a refused snapshot.
        analysis.catch(() => {});
      });
      // The release log lists it from now on, pending (or refused).
      ctx.listingEvents.announce(listing.owner, listing.slug);
      if (release.verdict !== 'pending') cutFinished(ctx, listing, cut, release.verdict);
    }
    if (release.verdict === 'pending') {
      const verdict = await inspect(ctx, listing, release, gitDir, analysis).catch(async (error: unknown) => {
        if (!isRefusal(error)) throw error;
        const recorded = await recordVerdict(ctx, listing, release, gitDir, {
          verdict: 'fail',
          computed: null,
          scan: refusalReport(error, ctx.clock.now()),
          analyzerVersion: null,
          scannerVersion: SCANNER_VERSION,
          sbomKey: null,
          diffSummary: null,
        });
        return recorded ? ('fail' as const) : undefined;
      });
      if (verdict) cutFinished(ctx, listing, cut, verdict);
    }
  } catch (error) {
    if (isSourceRefusal(error)) {
      // The source itself refuses (GitHub access gone, repository made public): retrying cannot
      // help until the creator acts, and the listing already says why. Nothing was released, so
      // the version is given back: sync (or the tag's webhook) cuts it once the source works.
      await finishCut(db, cut.id, 'failed', ctx.clock.now(), `${error.code}: ${error.message}`, {
        givesVersionBack: true,
      });
      return;
    }
    if (!options.finalAttempt) throw error;
    ctx.log.error({ err: error, cutId, version: cut.version }, 'release cut failed for good');
    cutFinished(ctx, listing, cut, 'error');
    await finishCut(
      db,
      cut.id,
      'failed',
      ctx.clock.now(),
      `internal: the release could not be cut (cut ${cut.id}); tag a new version to try again`,
    );
  }
}

/** Counts and logs a cut that ended: with the verdict it recorded, or `error` when it failed for good. */
function cutFinished(ctx: AppContext, listing: Listing, cut: ReleaseCutRow, verdict: string): void {
  const seconds = Math.max(0, (ctx.clock.now().getTime() - cut.requestedAt.getTime()) / 1000);
  // The verdict's webhook events were recorded with it; fan them out now.
  if (verdict !== 'error') void announceWebhookEvents(ctx);
  ctx.metrics.cuts.inc({ verdict });
  ctx.metrics.cutDuration.observe({ verdict }, seconds);
  logEvent(ctx.log, 'release.cut', {
    listing: `${listing.owner}/${listing.slug}`,
    version: cut.version,
    commit: cut.commitSha,
    trigger: cut.trigger,
    verdict,
    seconds,
  });
}

/**
 * Walks the commit's tree within the limits, zips it into content-addressed storage and records
 * the release as `pending`; a tree or zip past a limit is recorded as a refused release instead.
 */
async function snapshot(
  ctx: AppContext,
  listing: Listing,
  cut: ReleaseCutRow,
  gitDir: string,
  publishedAt: Date,
  withinLimits: () => void,
): Promise<ReleaseRow> {
  const db = ctx.database.db;
  const previous = await previousCut(ctx, cut);
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'repo402-cut-'));
  try {
    // A GitHub listing's commit is fetched now (its size checked through the API first).
    await fetchCutCommit(ctx, listing, cut);
    // Before any git command that reads the whole tree: a tree bomb stops here.
    await assertWithinLimits(ctx.config, gitDir, cut.commitSha);
    withinLimits();
    const zip = path.join(tmp, 'artifact.zip');
    // The release below this one lends its deflated entries for the files both hold (D-185).
    const earlier = (await releasesBelow(db, listing.id, parseVersion(cut.version)!)).at(-1);
    const reuse = earlier
      ? await fetchEarlierZip(ctx.blobs, earlier, tmp).catch((error: unknown) => {
          ctx.log.warn({ err: error, cutId: cut.id }, 'earlier zip not fetched; deflating every file');
          return undefined;
        })
      : undefined;
    // Built off the event loop; identical trees give identical bytes under the `<slug>/` folder,
    // whatever was reused.
    const artifact = await buildArtifact(
      {
        gitDir,
        commit: cut.commitSha,
        prefix: `${listing.slug}/`,
        outFile: zip,
        treeLimits: treeLimits(ctx.config),
        reuse,
      },
      { timeoutMs: ctx.config.cutWorkerTimeoutMs },
    );
    if (artifact.reuseSkipped)
      ctx.log.info({ cutId: cut.id, reason: artifact.reuseSkipped }, 'earlier zip not reused');
    const changelog = await changelogFor(gitDir, cut, previous);
    const stored = await storedArtifact(db, artifact.sha256);
    if (!stored) {
      // Checked again under the lock below; this spares storing a zip that would be refused.
      await assertArtifactFits(db, ctx.config, listing.creatorId, artifact);
      await ctx.blobs.putFile(artifactKeyOf(artifact.sha256), zip, 'application/zip');
    }
    return await db.transaction(async (tx) => {
      await lockCreator(tx, listing.creatorId);
      await assertArtifactFits(tx, ctx.config, listing.creatorId, artifact);
      const release = await insertRelease(tx, {
        ...releaseFields(listing, cut, changelog, publishedAt),
        artifactKey: stored?.key ?? artifactKeyOf(artifact.sha256),
        artifactSha256: artifact.sha256,
        sizeBytes: artifact.sizeBytes,
        // The inspection records what changed since the previous release.
        diffSummary: null,
      });
      await finishCut(tx, cut.id, 'cut', ctx.clock.now());
      return release;
    });
  } catch (error) {
    if (!isRefusal(error)) throw error;
    return refuse(ctx, listing, cut, gitDir, previous, publishedAt, error);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

/** Records a release refused for a limit: in the log like any failing release, with no zip. */
async function refuse(
  ctx: AppContext,
  listing: Listing,
  cut: ReleaseCutRow,
  gitDir: string,
  previous: ReleaseCutRow | undefined,
  publishedAt: Date,
  refusal: AppError,
): Promise<ReleaseRow> {
  const changelog = await changelogFor(gitDir, cut, previous);
  const verdict = {
    verdict: 'fail' as const,
    scan: refusalReport(refusal, ctx.clock.now()),
    scannerVersion: SCANNER_VERSION,
    analyzerVersion: null,
    computed: null,
    diffSummary: null,
  };
  const release = await recordAttested(ctx, listing, gitDir, cut.commitSha, verdict, async (tx) => {
    const inserted = await insertRelease(tx, {
      ...releaseFields(listing, cut, changelog, publishedAt),
      ...verdict,
      artifactKey: null,
      artifactSha256: null,
      sizeBytes: null,
    });
    await finishCut(tx, cut.id, 'refused', ctx.clock.now(), `${refusal.code}: ${refusal.message}`);
    if (inserted) {
      await enqueueVerdictEvents(tx, ctx.config.baseUrl, listing, inserted, 'fail', false, ctx.clock.now());
    }
    return inserted;
  });
  return release!;
}

type InspectionRecord = Parameters<typeof recordInspection>[2] & VerdictRecord;

/** Records the inspection's verdict and the release's attestation in one transaction; false when recorded already. */
async function recordVerdict(
  ctx: AppContext,
  listing: Listing,
  release: ReleaseRow,
  gitDir: string,
  changes: InspectionRecord,
): Promise<boolean> {
  const recorded = await recordAttested(ctx, listing, gitDir, release.commitSha, changes, async (tx) => {
    if (!(await recordInspection(tx, release.id, changes))) return undefined;
    // A passing release of a published listing may be the new one on sale.
    const onSale = changes.verdict === 'pass' ? await markOnSale(tx, listing.id, ctx.clock.now()) : undefined;
    const recorded = { ...release, ...changes };
    await enqueueVerdictEvents(
      tx,
      ctx.config.baseUrl,
      listing,
      recorded,
      changes.verdict,
      onSale === release.version,
      ctx.clock.now(),
    );
    return release;
  });
  return recorded !== undefined;
}

function releaseFields(listing: Listing, cut: ReleaseCutRow, changelog: string, publishedAt: Date) {
  return {
    listingId: listing.id,
    version: cut.version,
    ...parseVersion(cut.version)!,
    tag: cut.tag,
    commitSha: cut.commitSha,
    publishedAt,
    changelog,
  };
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
  // A GitHub tree refused before it was fetched is not here: its log entry has no changelog.
  if (!(await resolveCommit(gitDir, cut.commitSha))) return '';
  const message =
    (await annotatedTagMessage(gitDir, cut.tag)) ||
    (await commitSubjects(gitDir, cut.commitSha, previous?.commitSha))
      .map((subject) => `- ${subject}`)
      .join('\n');
  return message.length > MAX_CHANGELOG_CHARS ? `${message.slice(0, MAX_CHANGELOG_CHARS)}…` : message;
}

/** The analysis and scan of one version's commit (`ctx.inspectRelease`), against the releases below it. */
async function analyse(
  ctx: AppContext,
  listing: Listing,
  version: string,
  commit: string,
  publishedAt: Date,
  gitDir: string,
): Promise<InspectResult> {
  const previous = await releasesBelow(ctx.database.db, listing.id, parseVersion(version)!);
  return ctx.inspectRelease({
    repoPath: gitDir,
    commit,
    listing: { id: listing.id, owner: listing.owner, slug: listing.slug },
    version,
    publishedAt,
    previous: previous.map((row) => ({
      version: row.version,
      commitSha: row.commitSha,
      publishedAt: row.publishedAt,
    })),
    hosting: await hostingMeta(ctx, listing),
    treeLimits: treeLimits(ctx.config),
    onStage: (stage) => enterCutStage(ctx, listing, version, stage),
  });
}

/** Records the inspection of a pending release: the analysis started beside its zip, or one run now (a retried cut). */
async function inspect(
  ctx: AppContext,
  listing: Listing,
  release: ReleaseRow,
  gitDir: string,
  started: Promise<InspectResult> | undefined,
): Promise<ReleaseRow['verdict'] | undefined> {
  const result = await (started ??
    analyse(ctx, listing, release.version, release.commitSha, release.publishedAt, gitDir));
  await enterCutStage(ctx, listing, release.version, 'attestation');
  let sbomKey: string | null = null;
  if (result.sbom !== null) {
    sbomKey = `releases/${listing.id}/${release.version}/sbom.json`;
    await ctx.blobs.putBytes(sbomKey, Buffer.from(result.sbom, 'utf8'), 'application/json');
  }
  // Written before the verdict makes the release readable; a retry writes the same parts again.
  await recordReleaseTree(ctx.database.db, release.id, result.treeParts);
  const recorded = await recordVerdict(ctx, listing, release, gitDir, {
    verdict: result.verdict,
    computed: result.computed,
    scan: result.scan,
    analyzerVersion: result.analyzerVersion,
    scannerVersion: result.scannerVersion,
    sbomKey,
    diffSummary: result.diffSummary,
  });
  if (!recorded) return undefined;
  // A new verdict changes what the listing's public documents show.
  ctx.listingEvents.announce(listing.owner, listing.slug);
  return result.verdict;
}
