import type { Dependency } from '../../analysis/dependencies.js';
import type { DiffSummary } from '../../analysis/diff.js';
import type { TreeLimits } from '../../analysis/git.js';
import type { Computed } from '../../analysis/types.js';
import type { Capabilities, Finding, ScanNotes } from '../../scan/types.js';

/**
 * What the tree's analysis takes and gives, and its version, apart from the analysis itself
 * (`analyse-tree.ts`): the server's thread needs these, and only the analysis worker loads the
 * analysis's modules (docs/DECISIONS.md, D-60).
 */

export const ANALYZER_VERSION = '1.1.0';

/** Files per stored part of a release's file tree: about 60 KB of JSON, a few milliseconds for the embedded database. */
export const TREE_PART_FILES = 1000;

/**
 * A release's file tree (`computed.tree`) as the database stores it: JSON arrays of at most
 * `TREE_PART_FILES` files, in tree order. The analysis worker hands the tree to the server's thread
 * in this form. As 19,000 objects, the message took that thread 100-200 ms to rebuild, and the
 * thread only ever stores it; as text it costs a copy.
 */
export function encodeTreeParts(files: readonly unknown[]): string[] {
  const parts: string[] = [];
  for (let from = 0; from < files.length; from += TREE_PART_FILES)
    parts.push(JSON.stringify(files.slice(from, from + TREE_PART_FILES)));
  return parts;
}

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
  /** An earlier release's file results (`encodeFileResults`): files it holds unchanged are not analysed again. */
  earlierResults?: Uint8Array;
  /** Worker threads for the file pass; 0 runs everything in the calling thread. */
  workers?: number;
  /** When run in a worker: stop it after this long. */
  timeoutMs?: number;
}

/** Everything the repository alone tells; the database parts (originality, advisories) come after. */
export interface TreeAnalysis {
  computed: Omit<Computed, 'originality' | 'tree'>;
  /** `computed.tree`, encoded for storage (`encodeTreeParts`). */
  treeParts: string[];
  /** Findings of every check that reads only the tree (not `known_vulns` / `known_malware`). */
  findings: Finding[];
  /** The secret check's notes, one set per file pass. */
  notes: ScanNotes[];
  capabilities: Capabilities;
  dependencies: Dependency[];
  /** Blobs large enough to say something about copying, for originality. */
  blobShas: string[];
  /** This release's file results for the next one (`encodeFileResults`); none past the size limits. */
  fileResults: Uint8Array | undefined;
  /** Files read and analysed now, and files whose results came from `earlierResults`. */
  filesRead: number;
  filesReused: number;
  filesScanned: number;
  binarySkipped: number;
  sbom: string | null;
  diffSummary: DiffSummary;
}
