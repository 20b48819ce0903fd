import { createHash } from 'node:crypto';
import { deserialize, serialize } from 'node:v8';
import { gunzipSync, gzipSync } from 'node:zlib';
import { SCANNER_VERSION } from '../../scan/report.js';
import { SECRET_RULES } from '../../scan/secret-rules.js';
import type { FileResult } from './file-pass.js';
import { ANALYZER_VERSION } from './tree-analysis.js';

/**
 * The version of everything that produces a `FileResult`: the analyser's and scanner's versions
 * and the secret rules themselves (a rule edited without a version bump still invalidates). Kept
 * results of another version are never read: the release is computed afresh.
 */
export const FILE_RESULTS_VERSION = createHash('sha256')
  .update(JSON.stringify([ANALYZER_VERSION, SCANNER_VERSION, SECRET_RULES]))
  .digest('hex')
  .slice(0, 16);

/** A file's result is kept for its blob at its path with its mode: all the pass reads of it. */
export function fileResultKey(entry: { mode: string; sha: string; path: string }): string {
  return `${entry.mode} ${entry.sha} ${entry.path}`;
}

interface Pack {
  version: string;
  results: Map<string, FileResult>;
}

/**
 * A release's file results, kept beside its SBOM for the next release of the listing to read:
 * V8's serialisation (typed arrays and maps as they are, a format Node reads back across
 * versions) compressed with gzip. About 0.1 s and a few MB for 20,000 files.
 */
export function encodeFileResults(results: Map<string, FileResult>): Buffer {
  return gzipSync(serialize({ version: FILE_RESULTS_VERSION, results } satisfies Pack), { level: 1 });
}

/** The kept results, or none when they were made by another version or cannot be read. */
export function decodeFileResults(bytes: Uint8Array | undefined): Map<string, FileResult> {
  if (!bytes) return new Map();
  try {
    const pack = deserialize(gunzipSync(bytes)) as Pack;
    return pack.version === FILE_RESULTS_VERSION && pack.results instanceof Map ? pack.results : new Map();
  } catch {
    // Kept results are only a shortcut: a damaged pack means reading every file, never a failed cut.
    return new Map();
  }
}
