import type { AppError } from '../../platform/errors.js';
import { SCANNER_VERSION } from '../../scan/report.js';
import type { ScanReport } from '../../scan/types.js';

/** The `limits` rule each refusal is reported under; the tree rules are the scan's own ids. */
const RULES: Record<string, string> = {
  files: 'file-count',
  bytes: 'total-size',
  depth: 'path-depth',
  directories: 'directory-count',
  path_length: 'path-length',
  creator_storage: 'creator-storage',
};

/**
 * The scan report of a release refused before any of its files were read (its tree, or its zip,
 * passed a limit): one blocking finding of the `limits` check, the only check that ran, so no
 * other check claims a `pass` it never made. The finding says which limit, never a path.
 */
export function refusalReport(refusal: AppError, at: Date): ScanReport {
  const when = at.toISOString();
  const limit = String(refusal.details?.limit ?? '');
  return {
    verdict: 'fail',
    scanner_version: SCANNER_VERSION,
    at: when,
    checks: [
      {
        id: 'limits',
        tool: 'repo402-limits',
        tool_version: SCANNER_VERSION,
        status: 'fail',
        at: when,
        findings: 1,
      },
    ],
    findings: [
      {
        kind: 'limit',
        check: 'limits',
        tier: 'blocking',
        rule_id: RULES[limit] ?? 'repo-too-large',
        severity: 'HIGH',
        description: refusal.message,
      },
    ],
    capabilities: {
      tools: [],
      runs: [],
      hosts: [],
      env: [],
      install_runs: false,
      summary: 'Not inspected: the release was refused before its files were read.',
    },
    counts: { blocking: 1, disclosed: 0, review: 0 },
    files_scanned: 0,
    binary_files_skipped: 0,
    notes: [],
    notes_omitted: 0,
  };
}
