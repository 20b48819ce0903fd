import { buffer } from 'node:stream/consumers';
import type { DiffSummary } from '../../analysis/diff.js';
import { recordAndCompareBlobs } from '../../analysis/originality.js';
import type { Computed } from '../../analysis/types.js';
import type { AppContext } from '../../context.js';
import { BlobNotFoundError } from '../../platform/blobs/blobs.js';
import { ensureAdvisorySeed } from '../../scan/advisory-import.js';
import {
  advisoriesStale,
  advisoryDatasetStamp,
  checkDependencies,
  osvStamp,
} from '../../scan/dependency-checks.js';
import { assembleReport, SCANNER_VERSION } from '../../scan/report.js';
import { SECRET_RULES } from '../../scan/secret-rules.js';
import type { CheckId, ScanReport } from '../../scan/types.js';
import { analyseTreeOffThread } from './analyse-off-thread.js';
import type { InspectionInput, InspectionResult, ReleaseInspector } from './inspector.js';
import { ANALYZER_VERSION } from './tree-analysis.js';

/** What the real inspector finds: the seam's result with the analysis's and the scan's own types. */
export interface InspectResult extends InspectionResult {
  computed: Omit<Computed, 'tree'>;
  scan: ScanReport;
  diffSummary: DiffSummary;
  /** Files analysed now, and files whose results the previous release's kept results gave. */
  filesRead: number;
  filesReused: number;
}

/** Options for tests and benchmarks: worker threads for the file pass (0 = everything in-process). */
export interface InspectOptions {
  workers?: number;
}

type InspectDeps = Pick<AppContext, 'database' | 'clock' | 'config' | 'blobs'>;

/** The context's inspector (`ctx.inspectRelease`): the real analysis and scan. */
export function releaseInspector(deps: InspectDeps): ReleaseInspector {
  return (input) => inspectRelease(deps, input);
}

/**
 * Analyses and scans one release: the tree's analysis runs off the event loop (one streaming read
 * of the commit's files feeds every `computed` field and every per-file check), then dependency
 * checks and originality use the database. Nothing from the repository is executed.
 */
export async function inspectRelease(
  ctx: InspectDeps,
  input: InspectionInput,
  options: InspectOptions = {},
): Promise<InspectResult> {
  const db = ctx.database.db;
  const now = ctx.clock.now();
  const channel = `${input.listing.owner}/${input.listing.slug}`;
  const earlier = input.previous.at(-1);
  await input.onStage?.('analysis');
  // A bad commit fails here, before anything is recorded.
  const tree = await analyseTreeOffThread({
    repoPath: input.repoPath,
    commit: input.commit,
    previousCommit: earlier?.commitSha,
    earlierResults: earlier
      ? await readKept(ctx, fileResultsKey(input.listing.id, earlier.version))
      : undefined,
    channel,
    version: input.version,
    publishedAt: input.publishedAt,
    earlierDates: input.previous.map((p) => p.publishedAt),
    now,
    treeLimits: input.treeLimits,
    workers: options.workers,
    timeoutMs: options.workers === 0 ? undefined : ctx.config.cutWorkerTimeoutMs,
  });

  if (tree.fileResults) {
    await ctx.blobs.putBytes(
      fileResultsKey(input.listing.id, input.version),
      Buffer.from(tree.fileResults),
      'application/octet-stream',
    );
  }
  await input.onStage?.('scan');
  const originality = await recordAndCompareBlobs(db, {
    listingId: input.listing.id,
    channel,
    version: input.version,
    recordedAt: input.publishedAt,
    blobShas: tree.blobShas,
  });
  await ensureAdvisorySeed(db, now);
  const [dependencyScan, dataset] = await Promise.all([
    checkDependencies(db, tree.dependencies),
    advisoryDatasetStamp(db),
  ]);
  const osvVersion = osvStamp(dataset);
  const meta: Record<CheckId, { tool: string; tool_version: string; packages?: number }> = {
    secrets: { tool: 'repo402-secrets', tool_version: `${SCANNER_VERSION}+rules.${SECRET_RULES.length}` },
    limits: { tool: 'repo402-limits', tool_version: SCANNER_VERSION },
    known_vulns: { tool: 'repo402-osv', tool_version: osvVersion, packages: dependencyScan.checked },
    known_malware: { tool: 'repo402-osv', tool_version: osvVersion, packages: dependencyScan.checked },
    dep_behaviour: {
      tool: 'repo402-behaviour',
      tool_version: SCANNER_VERSION,
      packages: tree.dependencies.length,
    },
    capabilities: { tool: 'repo402-capabilities', tool_version: SCANNER_VERSION },
    injection: { tool: 'repo402-unicode', tool_version: SCANNER_VERSION },
  };
  const scan = assembleReport({
    findings: [...tree.findings, ...dependencyScan.findings],
    notes: tree.notes,
    capabilities: tree.capabilities,
    meta,
    at: now,
    filesScanned: tree.filesScanned,
    binarySkipped: tree.binarySkipped,
  });

  return {
    computed: {
      ...tree.computed,
      // Only dependencies with a version are checked: say when the advisory data behind
      // `known_vulns: pass` is old (see docs/ANALYSIS.md).
      warnings:
        tree.dependencies.length > 0 && advisoriesStale(dataset, now)
          ? [...tree.computed.warnings, 'advisories_stale']
          : tree.computed.warnings,
      originality,
      repo_meta: input.hosting?.repoMeta ?? null,
      owner: input.hosting?.owner ?? null,
    },
    treeParts: tree.treeParts,
    scan,
    verdict: scan.verdict,
    analyzerVersion: ANALYZER_VERSION,
    scannerVersion: SCANNER_VERSION,
    sbom: tree.sbom,
    diffSummary: tree.diffSummary,
    filesRead: tree.filesRead,
    filesReused: tree.filesReused,
  };
}

/** Where a release's per-file results are kept (`file-results.ts`), beside its SBOM. */
function fileResultsKey(listingId: string, version: string): string {
  return `releases/${listingId}/${version}/file-results.bin`;
}

/** The bytes under `key`, or none: an earlier release cut before results were kept has none. */
async function readKept(ctx: InspectDeps, key: string): Promise<Buffer | undefined> {
  try {
    const { stream } = await ctx.blobs.open(key);
    return await buffer(stream);
  } catch (error) {
    if (error instanceof BlobNotFoundError) return undefined;
    throw error;
  }
}
