/**
 * The in-toto Statement v1 (https://github.com/in-toto/attestation/blob/main/spec/v1/statement.md)
 * a release is attested with, and its predicate: what repo402 knew of the release when its verdict
 * was recorded. docs/ATTESTATIONS.md describes every field.
 */

export const STATEMENT_TYPE = 'https://in-toto.io/Statement/v1';

/** The predicate's type URI: versioned, under the service's own base URL. */
export function predicateTypeOf(baseUrl: string): string {
  return `${baseUrl}/docs/attestations/release/v1`;
}

export interface ScanCheckFacts {
  id: string;
  tool: string;
  tool_version: string;
  status: string;
  findings: number;
}

/** Plain values the release cut hands over; this module knows no release rows. */
export interface ReleaseFacts {
  baseUrl: string;
  listing: { id: string; owner: string; slug: string; source: 'hosted' | 'github' };
  version: string;
  tag: string;
  commitSha: string;
  /** Null only for a GitHub tree refused before its commit was fetched. */
  treeSha: string | null;
  cutAt: Date;
  /** Null for a release refused for a limit before any zip was made. */
  artifact: { sha256: string; sizeBytes: number } | null;
  scan: {
    verdict: 'pass' | 'fail';
    scannerVersion: string | null;
    /** Null when the stored report has no counts (never for a real inspection). */
    counts: { blocking: number; disclosed: number; review: number } | null;
    checks: ScanCheckFacts[];
  };
  analyzerVersion: string | null;
  licence: { spdx: string; verdict: string } | null;
  diffSummary: unknown;
}

/** The advisory checks carry the dataset's stamp (its size and freshness) as their tool version. */
const ADVISORY_CHECKS = ['known_vulns', 'known_malware'];

export function artifactName(slug: string, version: string): string {
  return `${slug}-${version}.zip`;
}

export function buildStatement(facts: ReleaseFacts, attestedAt: Date) {
  const { listing } = facts;
  const subject = facts.artifact
    ? { name: artifactName(listing.slug, facts.version), digest: { sha256: facts.artifact.sha256 } }
    : // No zip exists: the statement is about the tagged commit that was refused.
      { name: `${listing.owner}/${listing.slug}@${facts.tag}`, digest: { gitCommit: facts.commitSha } };
  const advisory = facts.scan.checks.find((check) => ADVISORY_CHECKS.includes(check.id));
  return {
    _type: STATEMENT_TYPE,
    subject: [subject],
    predicateType: predicateTypeOf(facts.baseUrl),
    predicate: {
      service: facts.baseUrl,
      listing: {
        id: listing.id,
        owner: listing.owner,
        slug: listing.slug,
        channel: `${listing.owner}/${listing.slug}`,
        source: listing.source,
      },
      version: facts.version,
      tag: facts.tag,
      commit_sha: facts.commitSha,
      tree_sha: facts.treeSha,
      cut_at: facts.cutAt.toISOString(),
      artifact: facts.artifact
        ? {
            name: artifactName(listing.slug, facts.version),
            sha256: facts.artifact.sha256,
            size_bytes: facts.artifact.sizeBytes,
          }
        : null,
      scan: {
        verdict: facts.scan.verdict,
        counts: facts.scan.counts,
        scanner_version: facts.scan.scannerVersion,
        advisory_dataset: advisory?.tool_version ?? null,
        checks: facts.scan.checks.map(({ id, tool, tool_version, status, findings }) => ({
          id,
          tool,
          tool_version,
          status,
          findings,
        })),
      },
      analyzer_version: facts.analyzerVersion,
      licence: facts.licence,
      diff_summary: facts.diffSummary ?? null,
      attested_at: attestedAt.toISOString(),
    },
  };
}

export type Statement = ReturnType<typeof buildStatement>;
