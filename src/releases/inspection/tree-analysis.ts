import type { Dependency } from '../../analysis/dependencies.js';
import type { DiffSummary } from '../../analysis/diff.js';
import type { TreeLimits } from '../../analysis/git.js';
import type { Computed } from '../../analysis/types.js';
import type { Capabilities, Finding } from '../../scan/types.js';

/**
 * What the tree's analysis takes and gives, and its version, apart from the analysis itself
 * (`analyse-tree.ts`): the server's thread needs these, and only the analysis worker loads the
 * analysis's modules (docs/BENCHMARKS.md, memory).
 */

export const ANALYZER_VERSION = '1.0.0';

export interface TreeAnalysisInput {
  repoPath: string;
  commit: string;
  /** The previous release's commit: the diff is taken against it (else the whole tree is new). */
  previousCommit?: string;
  channel: string;
  version: string;
  publishedAt: Date;
  /** Publication dates of the earlier releases, oldest first. */
  earlierDates: Date[];
  now: Date;
  /** The configured tree limits (the defaults when omitted). */
  treeLimits?: TreeLimits;
  /** Worker threads for the file pass; 0 runs everything in the calling thread. */
  workers?: number;
  /** When run in a worker: stop it after this long. */
  timeoutMs?: number;
}

/** Everything the repository alone tells; the database parts (originality, advisories) come after. */
export interface TreeAnalysis {
  computed: Omit<Computed, 'originality'>;
  /** Findings of every check that reads only the tree (not `known_vulns` / `known_malware`). */
  findings: Finding[];
  capabilities: Capabilities;
  dependencies: Dependency[];
  /** Blobs large enough to say something about copying, for originality. */
  blobShas: string[];
  filesScanned: number;
  binarySkipped: number;
  sbom: string | null;
  diffSummary: DiffSummary;
}
