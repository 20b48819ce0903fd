import type { TreeLimits } from '../../git/tree.js';
import type { OwnerMeta, RepoMeta } from '../../github/client.js';
import type { CutStage } from '../../listings/cut-stages.js';

/** SPEC.md `computed.repo_meta` and `computed.owner`; a field with no source is null, never invented. */
export interface HostingMeta {
  repoMeta: { [K in keyof RepoMeta]: RepoMeta[K] | null };
  owner: { [K in keyof OwnerMeta]: OwnerMeta[K] | null };
}

/**
 * The seam between the release cut and analysis/scanning. The cut snapshots a commit and records
 * the release as `pending`; then the inspector (`inspectRelease`, the analysis and scan of one
 * commit) computes the manifest fields and the scan, and the cut records them once (a verdict is
 * terminal). A cut whose inspection has not finished stays `pending` and cannot be published.
 * The context carries the inspector (`ctx.inspectRelease`), so a test can hand the cut its own.
 */
export interface InspectionInput {
  /** The bare repository; read it with git, never write to it. */
  repoPath: string;
  commit: string;
  listing: { id: string; owner: string; slug: string };
  version: string;
  publishedAt: Date;
  /** Earlier cut releases of this listing, oldest first. */
  previous: Array<{ version: string; commitSha: string; publishedAt: Date }>;
  /** The configured tree limits (the defaults when omitted). */
  treeLimits?: TreeLimits;
  /** `computed.repo_meta` and `computed.owner` (null when omitted). */
  hosting?: HostingMeta;
  /**
   * Called as the inspection enters each of its stages, so the cut can show its progress; the
   * inspector waits for it and knows nothing of where it is recorded.
   */
  onStage?: (stage: Extract<CutStage, 'analysis' | 'scan'>) => Promise<void>;
}

export interface InspectionResult {
  /** The manifest's `computed` apart from its file tree. */
  computed: unknown;
  /** `computed.tree`, as the database stores it (`encodeTreeParts`); empty when the inspector lists no files. */
  treeParts: string[];
  scan: unknown;
  verdict: 'pass' | 'fail';
  analyzerVersion: string;
  scannerVersion: string;
  /** SBOM document (JSON text), stored beside the artifact. */
  sbom: string | null;
  /** What changed since the previous release (everything, for the first). */
  diffSummary: unknown;
}

export type ReleaseInspector = (input: InspectionInput) => Promise<InspectionResult>;
