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
