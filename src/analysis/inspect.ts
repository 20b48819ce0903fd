import type { AppContext } from '../context.js';
import { ensureAdvisorySeed } from '../scan/advisory-import.js';
import { advisoryDatasetStamp } from '../scan/advisory-store.js';
import { checkDependencies } from '../scan/dependency-checks.js';
import { assembleReport, SCANNER_VERSION } from '../scan/report.js';
import { SECRET_RULES } from '../scan/secret-rules.js';
import type { CheckId, ScanReport } from '../scan/types.js';
import { ANALYZER_VERSION, analyseTreeOffThread } from './analyse-tree.js';
import type { DiffSummary } from './diff.js';
import type { TreeLimits } from './git.js';
import { recordAndCompareBlobs } from './originality.js';
import type { Computed } from './types.js';

export { toPublicScan } from '../scan/report.js';
export type { PublicScan, ScanReport } from '../scan/types.js';
export type { DiffSummary } from './diff.js';
export type { Computed } from './types.js';

export interface InspectInput {
  repoPath: string;
  commit: string;
  listing: { id: string; owner: string; slug: string };
  version: string;
  publishedAt: Date;
  /** Earlier releases of this listing, oldest first. */
  previous: Array<{ version: string; commitSha: string; publishedAt: Date }>;
  /** The configured tree limits (the defaults when omitted). */
  treeLimits?: TreeLimits;
}

export interface InspectResult {
  computed: Computed;
  scan: ScanReport;
  verdict: 'pass' | 'fail';
  analyzerVersion: string;
  scannerVersion: string;
  sbom: string | null;
  diffSummary: DiffSummary;
}

/** Options for tests and benchmarks: worker threads for the file pass (0 = everything in-process). */
export interface InspectOptions {
  workers?: number;
}

/**
 * Analyses and scans one release: the tree's analysis runs off the event loop (one streaming read
 * of the commit's files feeds every `computed` field and every per-file check), then dependency
 * checks and originality use the database. Nothing from the repository is executed.
 */
export async function inspectRelease(
  ctx: AppContext,
  input: InspectInput,
  options: InspectOptions = {},
): Promise<InspectResult> {
  const db = ctx.database.db;
  const now = ctx.clock.now();
  const channel = `${input.listing.owner}/${input.listing.slug}`;
  // A bad commit fails here, before anything is recorded.
  const tree = await analyseTreeOffThread({
    repoPath: input.repoPath,
    commit: input.commit,
    previousCommit: input.previous.at(-1)?.commitSha,
    channel,
    version: input.version,
    publishedAt: input.publishedAt,
    earlierDates: input.previous.map((p) => p.publishedAt),
    now,
    treeLimits: input.treeLimits,
    workers: options.workers,
    timeoutMs: options.workers === 0 ? undefined : ctx.config.cutWorkerTimeoutMs,
  });

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
  const osvStamp = `${SCANNER_VERSION}+osv.${dataset.records}${dataset.newest ? `.${dataset.newest.toISOString().slice(0, 10)}` : ''}`;
  const meta: Record<CheckId, { tool: string; tool_version: string; packages?: number }> = {
    secrets: { tool: 'repo402-secrets', tool_version: `${SCANNER_VERSION}+rules.${SECRET_RULES.length}` },
    limits: { tool: 'repo402-limits', tool_version: SCANNER_VERSION },
    known_vulns: { tool: 'repo402-osv', tool_version: osvStamp, packages: dependencyScan.checked },
    known_malware: { tool: 'repo402-osv', tool_version: osvStamp, packages: dependencyScan.checked },
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
    capabilities: tree.capabilities,
    meta,
    at: now,
    filesScanned: tree.filesScanned,
    binarySkipped: tree.binarySkipped,
  });

  return {
    computed: { ...tree.computed, originality },
    scan,
    verdict: scan.verdict,
    analyzerVersion: ANALYZER_VERSION,
    scannerVersion: SCANNER_VERSION,
    sbom: tree.sbom,
    diffSummary: tree.diffSummary,
  };
}
