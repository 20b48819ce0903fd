import type { Dependency } from '../analysis/dependencies.js';
import type { Db } from '../db/connect.js';
import { advisoriesFor } from './advisory-store.js';

/** How many advisory records there are and how new the newest is: for `osvStamp` and `advisoriesStale`. */
export { advisoryDatasetStamp } from './advisory-store.js';

import { isAffected, normaliseName, type OsvRange } from './osv.js';
import { SCANNER_VERSION } from './report.js';
import type { Finding } from './types.js';

/**
 * `known_vulns` and `known_malware`: each dependency with a known version against the imported
 * OSV advisories. MAL- records block; HIGH and CRITICAL vulnerabilities block; MODERATE and LOW
 * are disclosed; a vulnerability without any severity goes to review.
 */
export async function checkDependencies(
  db: Db,
  dependencies: Dependency[],
): Promise<{ findings: Finding[]; checked: number }> {
  const versioned = dependencies.filter((d) => d.version);
  const rows = await advisoriesFor(db, versioned);
  const byPackage = new Map<string, typeof rows>();
  for (const row of rows) {
    const key = `${row.ecosystem}\0${row.name}`;
    byPackage.set(key, [...(byPackage.get(key) ?? []), row]);
  }
  const findings: Finding[] = [];
  const seen = new Set<string>();
  for (const dep of versioned) {
    for (const advisory of byPackage.get(`${dep.ecosystem}\0${normaliseName(dep.ecosystem, dep.name)}`) ??
      []) {
      if (
        !isAffected(
          dep.ecosystem,
          { ranges: advisory.ranges as OsvRange[], versions: advisory.versions },
          dep.version!,
        )
      )
        continue;
      const key = `${advisory.id}\0${dep.ecosystem}\0${dep.name}\0${dep.version}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const pkg = {
        ecosystem: dep.ecosystem,
        name: dep.name,
        version: dep.version,
        direct: dep.direct,
        dev: dep.dev,
      };
      const aliases = advisory.aliases.length > 0 ? ` (${advisory.aliases.join(', ')})` : '';
      if (advisory.malicious) {
        findings.push({
          kind: 'malware',
          check: 'known_malware',
          tier: 'blocking',
          rule_id: advisory.id,
          severity: 'CRITICAL',
          description: `${dep.name}@${dep.version} is a known malicious package: ${advisory.summary}`,
          path: dep.source,
          package: pkg,
          source: `osv:${advisory.id}`,
        });
        continue;
      }
      const severity = advisory.severity ?? 'MODERATE';
      findings.push({
        kind: 'vulnerability',
        check: 'known_vulns',
        tier:
          advisory.severity === null
            ? 'review'
            : severity === 'HIGH' || severity === 'CRITICAL'
              ? 'blocking'
              : 'disclosed',
        rule_id: advisory.id,
        severity,
        description: `${dep.name}@${dep.version}: ${advisory.summary}${aliases}${advisory.cvssScore !== null ? `, CVSS ${advisory.cvssScore}` : ''}`,
        path: dep.source,
        package: pkg,
        source: `osv:${advisory.id}`,
      });
    }
  }
  return { findings, checked: versioned.length };
}

/** The OSV checks' tool version: the scanner's, with the size and date of the advisory data it read. */
export function osvStamp(dataset: { records: number; newest: Date | null }): string {
  return `${SCANNER_VERSION}+osv.${dataset.records}${dataset.newest ? `.${dataset.newest.toISOString().slice(0, 10)}` : ''}`;
}

/**
 * Advisory data older than this is stale: the newest record's `modified` date says how current
 * the dataset is (OSV's exports change every day; the built-in three-record seed is years old).
 */
export const ADVISORY_MAX_AGE_DAYS = 7;

/** Whether `computed.warnings` should say `advisories_stale`. */
export function advisoriesStale(dataset: { newest: Date | null }, now: Date): boolean {
  return !dataset.newest || now.getTime() - dataset.newest.getTime() > ADVISORY_MAX_AGE_DAYS * 86_400_000;
}
