import { compare as pep440Compare, valid as pep440Valid } from '@renovatebot/pep440';
import cvss from 'ae-cvss-calculator';
import semver from 'semver';
import type { Ecosystem } from '../analysis/dependencies.js';
import type { Severity } from './types.js';

/** The parts of an OSV record (https://ossf.github.io/osv-schema/) that matching reads. */
export interface OsvRecord {
  id: string;
  modified: string;
  withdrawn?: string;
  summary?: string;
  details?: string;
  aliases?: string[];
  severity?: Array<{ type: string; score: string }>;
  affected?: OsvAffected[];
  database_specific?: { severity?: string } & Record<string, unknown>;
}
export interface OsvAffected {
  package?: { ecosystem?: string; name?: string; purl?: string };
  ranges?: OsvRange[];
  versions?: string[];
  database_specific?: { severity?: string } & Record<string, unknown>;
}
export interface OsvRange {
  type: 'SEMVER' | 'ECOSYSTEM' | 'GIT' | string;
  events: Array<{ introduced?: string; fixed?: string; last_affected?: string; limit?: string }>;
}

/** Every ecosystem the dependency analysis resolves, by its OSV name (the export folder too). */
const ECOSYSTEMS: Record<Ecosystem, true> = { npm: true, PyPI: true, 'crates.io': true, Go: true };
export const SUPPORTED_ECOSYSTEMS: ReadonlySet<string> = new Set(Object.keys(ECOSYSTEMS));

export function isOsvRecord(value: unknown): value is OsvRecord {
  const record = value as OsvRecord;
  return (
    typeof record === 'object' &&
    record !== null &&
    typeof record.id === 'string' &&
    record.id.length > 0 &&
    record.id.length <= 200 &&
    typeof record.modified === 'string' &&
    !Number.isNaN(Date.parse(record.modified)) &&
    (record.affected === undefined || Array.isArray(record.affected))
  );
}

/** Names as each ecosystem compares them: PyPI per PEP 503, the others exactly. */
export function normaliseName(ecosystem: string, name: string): string {
  return ecosystem === 'PyPI' ? name.toLowerCase().replace(/[-_.]+/g, '-') : name;
}

/** MAL- records (OpenSSF malicious packages) mark a package as malicious rather than vulnerable. */
export const isMalicious = (record: OsvRecord) => record.id.startsWith('MAL-');

function severityFromScore(score: number): Severity | null {
  if (score >= 9) return 'CRITICAL';
  if (score >= 7) return 'HIGH';
  if (score >= 4) return 'MODERATE';
  if (score > 0) return 'LOW';
  return null;
}

/** The highest CVSS v3/v4 base score among the record's vectors, or null. */
export function cvssScore(record: OsvRecord): number | null {
  let best: number | null = null;
  for (const entry of record.severity ?? []) {
    if (!/^CVSS_V[34]$/.test(entry.type)) continue;
    try {
      const scores = cvss.fromVector(entry.score)?.calculateScores() as
        | { base?: number; overall?: number }
        | undefined;
      const score = scores?.base ?? scores?.overall;
      if (typeof score === 'number' && (best === null || score > best)) best = score;
    } catch {
      // An unparsable vector gives no score; the database severity may still.
    }
  }
  return best;
}

/** The record's own severity label when it has one (GitHub's), else the one its CVSS score implies. */
export function recordSeverity(record: OsvRecord): { severity: Severity | null; score: number | null } {
  const score = cvssScore(record);
  const label = String(
    record.database_specific?.severity ?? record.affected?.[0]?.database_specific?.severity ?? '',
  ).toUpperCase();
  const byLabel: Severity | null =
    label === 'CRITICAL'
      ? 'CRITICAL'
      : label === 'HIGH'
        ? 'HIGH'
        : label === 'MODERATE' || label === 'MEDIUM'
          ? 'MODERATE'
          : label === 'LOW'
            ? 'LOW'
            : null;
  return { severity: byLabel ?? (score === null ? null : severityFromScore(score)), score };
}

type Compare = (a: string, b: string) => number;

function comparatorFor(ecosystem: string): { valid: (v: string) => boolean; compare: Compare } {
  if (ecosystem === 'PyPI') return { valid: (v) => pep440Valid(v) !== null, compare: pep440Compare };
  const clean = (v: string) =>
    semver.valid(
      semver.coerce(v.replace(/^v/, '').replace(/\+incompatible$/, ''), { includePrerelease: true }),
    ) ?? v;
  const parse = (v: string) => semver.valid(v.replace(/^v/, '').replace(/\+incompatible$/, '')) ?? clean(v);
  return {
    valid: (v) => semver.valid(parse(v)) !== null,
    compare: (a, b) => semver.compare(parse(a), parse(b)),
  };
}

/** Whether `version` is affected by the OSV `affected` entry (explicit versions or SEMVER/ECOSYSTEM ranges). */
export function isAffected(
  ecosystem: string,
  affected: { ranges: OsvRange[]; versions: string[] },
  version: string,
): boolean {
  if (affected.versions.includes(version)) return true;
  const { valid, compare } = comparatorFor(ecosystem);
  if (!valid(version)) return false;
  for (const range of affected.ranges) {
    if (range.type !== 'SEMVER' && range.type !== 'ECOSYSTEM') continue;
    const events = range.events
      .filter((e) => {
        const value = e.introduced ?? e.fixed ?? e.last_affected;
        return value !== undefined && (value === '0' || valid(value));
      })
      .sort((a, b) => {
        const va = a.introduced ?? a.fixed ?? a.last_affected!;
        const vb = b.introduced ?? b.fixed ?? b.last_affected!;
        if (va === '0') return -1;
        if (vb === '0') return 1;
        return compare(va, vb);
      });
    let affectedHere = false;
    for (const event of events) {
      if (event.introduced !== undefined) {
        if (event.introduced === '0' || compare(version, event.introduced) >= 0) affectedHere = true;
      } else if (event.fixed !== undefined) {
        if (compare(version, event.fixed) >= 0) affectedHere = false;
      } else if (event.last_affected !== undefined) {
        if (compare(version, event.last_affected) > 0) affectedHere = false;
      }
    }
    if (affectedHere) return true;
  }
  return false;
}
