import type { TreeEntry } from '../analysis/git.js';
import type { Finding } from './types.js';

/** SPEC limits (200 MB, 20,000 files) and the per-file limits documented in docs/SCANNING.md. */
export const LIMITS = {
  totalBytes: 200 * 1024 * 1024,
  files: 20_000,
  fileBytes: 50 * 1024 * 1024,
  pathBytes: 1024,
  depth: 64,
};

export function checkLimits(entries: TreeEntry[]): Finding[] {
  const findings: Finding[] = [];
  const block = (rule: string, description: string, path?: string) =>
    findings.push({
      kind: 'limit',
      check: 'limits',
      tier: 'blocking',
      rule_id: rule,
      severity: 'HIGH',
      description,
      ...(path ? { path } : {}),
    });
  const total = entries.reduce((sum, e) => sum + e.size, 0);
  if (total > LIMITS.totalBytes)
    block('total-size', `The tree holds ${mb(total)} MB; the limit is ${mb(LIMITS.totalBytes)} MB`);
  if (entries.length > LIMITS.files)
    block('file-count', `The tree holds ${entries.length} files; the limit is ${LIMITS.files}`);
  for (const entry of entries) {
    if (entry.size > LIMITS.fileBytes)
      block(
        'file-size',
        `File of ${mb(entry.size)} MB; the per-file limit is ${mb(LIMITS.fileBytes)} MB`,
        entry.path,
      );
    if (Buffer.byteLength(entry.path) > LIMITS.pathBytes)
      block('path-length', `Path longer than ${LIMITS.pathBytes} bytes`, entry.path.slice(0, 200));
    else if (entry.path.split('/').length - 1 > LIMITS.depth)
      block('path-depth', `Path nested deeper than ${LIMITS.depth} directories`, entry.path);
  }
  return findings;
}

export const withinTotals = (entries: TreeEntry[]) =>
  entries.length <= LIMITS.files && entries.reduce((sum, e) => sum + e.size, 0) <= LIMITS.totalBytes;

const mb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;
