export type Tier = 'blocking' | 'disclosed' | 'review';
export type Severity = 'LOW' | 'MODERATE' | 'HIGH' | 'CRITICAL';
export type CheckId =
  | 'secrets'
  | 'limits'
  | 'known_vulns'
  | 'known_malware'
  | 'dep_behaviour'
  | 'capabilities'
  | 'injection';
export const CHECK_IDS: CheckId[] = [
  'secrets',
  'limits',
  'known_vulns',
  'known_malware',
  'dep_behaviour',
  'capabilities',
  'injection',
];

export interface PackageRef {
  ecosystem: string;
  name: string;
  version?: string | null;
  direct: boolean;
  dev: boolean;
}

export interface Finding {
  kind:
    | 'secret'
    | 'limit'
    | 'vulnerability'
    | 'malware'
    | 'behaviour'
    | 'capability'
    | 'hidden_unicode'
    | 'injection'
    | 'path';
  check: CheckId;
  tier: Tier;
  rule_id: string;
  severity: Severity;
  description: string;
  /** Shown escaped (`escapeDisplay`): backslashes, control and invisible characters as `\\`, `\n`, `\u202e`. */
  path?: string;
  line?: number;
  package?: PackageRef;
  /** Where the finding comes from: an advisory id, `code` or `docs`, a manifest path. */
  source?: string;
  /** Secrets only: a redacted hint such as `AKIA…(20 chars)`; the value itself is never kept. */
  hint?: string;
}

/**
 * A credential-shaped value the secret check allowed because it reads as a documented example or
 * placeholder (AWS's `AKIAIOSFODNN7EXAMPLE`, `your_api_key`, `<token>`): told to the creator so an
 * allowed value is never a surprise. A note is not a finding: it is never counted and never changes
 * the verdict or a check's status.
 */
export interface ScanNote {
  kind: 'allowed_example';
  check: 'secrets';
  /** The rule that matched the value. */
  rule_id: string;
  /** What the rule looks for: `AWS access key ID`. */
  description: string;
  /** What made the value read as an example: `it contains “EXAMPLE”`. */
  reason: string;
  /** Escaped as a finding's path is. */
  path: string;
  line: number;
  /** Redacted as a secret finding's hint: `AKIA…(20 chars)`. */
  hint: string;
}

/** Notes a report keeps; one placeholder-heavy file must not grow the report without bound. */
export const MAX_SCAN_NOTES = 20;

/** The notes one scan gathered (at most `MAX_SCAN_NOTES`) and how many more it saw. */
export interface ScanNotes {
  notes: ScanNote[];
  omitted: number;
}

export interface CheckResult {
  id: CheckId;
  tool: string;
  tool_version: string;
  /** `pass` (nothing found), `findings` (disclosed or review findings only), `fail` (a blocking finding). */
  status: 'pass' | 'findings' | 'fail';
  at: string;
  findings: number;
  packages?: number;
}

export interface HostUse {
  host: string;
  local: boolean;
  from: 'code' | 'docs';
  paths: string[];
}

export interface Capabilities {
  tools: string[];
  runs: string[];
  hosts: HostUse[];
  env: Array<{ name: string; paths: string[] }>;
  install_runs: boolean;
  summary: string;
}

/** The full trust report: served only to the creator (`scan_report`). */
export interface ScanReport {
  verdict: 'pass' | 'fail';
  scanner_version: string;
  at: string;
  checks: CheckResult[];
  findings: Finding[];
  capabilities: Capabilities;
  counts: { blocking: number; disclosed: number; review: number };
  files_scanned: number;
  binary_files_skipped: number;
  /** Allowed examples and placeholders, at most `MAX_SCAN_NOTES`; absent on reports made before notes existed. */
  notes?: ScanNote[];
  /** How many notes were left out past the cap. */
  notes_omitted?: number;
}

/** `computed.scan` in the public manifest. */
export interface PublicScan {
  verdict: 'pass' | 'fail';
  scanner_version: string;
  at: string;
  checks: CheckResult[];
  findings: Array<Omit<Finding, 'line' | 'hint'>>;
  capabilities: Capabilities;
  counts: { blocking: number; disclosed: number; review: number };
}
