import { listing } from '../analysis/components.js';
import { isLocalHost } from './capabilities.js';
import { escapeDisplay } from './paths.js';
import {
  type Capabilities,
  CHECK_IDS,
  type CheckId,
  type CheckResult,
  type Finding,
  MAX_SCAN_NOTES,
  type PublicScan,
  type ScanNote,
  type ScanNotes,
  type ScanReport,
} from './types.js';

export const SCANNER_VERSION = '1.0.0';

const MAX_HOSTS = 100;
const MAX_PATHS = 5;

export interface CapabilityInput {
  hosts: Array<{ host: string; from: 'code' | 'docs'; path: string }>;
  env: Array<{ name: string; path: string }>;
  tools: Array<{ name: string; path: string }>;
  runs: string[];
  installRuns: boolean;
}

/** The capability summary and its disclosed findings (and `review` ones where env reads meet network use). */
export function summariseCapabilities(input: CapabilityInput): {
  capabilities: Capabilities;
  findings: Finding[];
} {
  const hostMap = new Map<string, { host: string; local: boolean; from: 'code' | 'docs'; paths: string[] }>();
  for (const { host, from, path: raw } of input.hosts) {
    const key = `${from}\0${host}`;
    const path = escapeDisplay(raw);
    const entry = hostMap.get(key) ?? { host, local: isLocalHost(host), from, paths: [] };
    if (entry.paths.length < MAX_PATHS && !entry.paths.includes(path)) entry.paths.push(path);
    hostMap.set(key, entry);
  }
  const hosts = [...hostMap.values()]
    .sort((a, b) => a.from.localeCompare(b.from) || a.host.localeCompare(b.host))
    .slice(0, MAX_HOSTS);
  const envMap = new Map<string, string[]>();
  for (const { name, path: raw } of input.env) {
    const path = escapeDisplay(raw);
    const paths = envMap.get(name) ?? [];
    if (paths.length < MAX_PATHS && !paths.includes(path)) paths.push(path);
    envMap.set(name, paths);
  }
  const env = [...envMap].sort(([a], [b]) => a.localeCompare(b)).map(([name, paths]) => ({ name, paths }));
  const tools = [...new Set(input.tools.map((t) => t.name))].sort();
  const runs = [...new Set(input.runs)];
  const remote = hosts.filter((h) => h.from === 'code' && !h.local);

  const findings: Finding[] = [];
  const disclose = (rule: string, description: string, source?: string) =>
    findings.push({
      kind: 'capability',
      check: 'capabilities',
      tier: 'disclosed',
      rule_id: rule,
      severity: 'LOW',
      description,
      ...(source ? { source } : {}),
    });
  if (remote.length > 0)
    disclose(
      'network',
      `Code contacts ${count(remote.length, 'host')}: ${preview(remote.map((h) => h.host))}`,
      'code',
    );
  if (hosts.some((h) => h.from === 'code' && h.local))
    disclose('local-network', 'Code talks to services on this machine (loopback addresses)', 'code');
  if (env.length > 0)
    disclose(
      'environment',
      `Reads ${count(env.length, 'environment variable')}: ${preview(env.map((e) => e.name))}`,
      'code',
    );
  if (tools.length > 0) disclose('runs-programs', `Runs external programs: ${preview(tools)}`, 'code');
  if (runs.length > 0)
    disclose(
      'automatic-commands',
      `Runs commands automatically (install, hooks, MCP servers): ${preview(runs)}`,
    );

  // A file that both reads the environment and contacts a remote host could send secrets away.
  const envFiles = new Set(input.env.map((e) => e.path));
  const remoteFiles = new Set(
    input.hosts.filter((h) => h.from === 'code' && !isLocalHost(h.host)).map((h) => h.path),
  );
  for (const path of [...envFiles].filter((p) => remoteFiles.has(p)).sort()) {
    findings.push({
      kind: 'capability',
      check: 'capabilities',
      tier: 'review',
      rule_id: 'env-and-network',
      severity: 'MODERATE',
      description: 'Reads environment variables and contacts a remote host in the same file',
      path,
      source: 'code',
    });
  }

  const said: string[] = [];
  said.push(
    remote.length > 0
      ? `contacts ${count(remote.length, 'host')} (${preview(
          remote.map((h) => h.host),
          3,
        )})`
      : 'contacts no remote hosts from code',
  );
  if (env.length > 0) said.push(`reads ${count(env.length, 'environment variable')}`);
  if (tools.length > 0) said.push(`runs ${preview(tools, 3)}`);
  said.push(input.installRuns ? 'runs code at install' : 'runs nothing at install');
  const summary = `${capitalise(listing(said))}.`;
  return { capabilities: { tools, runs, hosts, env, install_runs: input.installRuns, summary }, findings };
}

const count = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;
const preview = (items: string[], max = 8) =>
  items.length > max ? `${items.slice(0, max).join(', ')} and ${items.length - max} more` : items.join(', ');
const capitalise = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

export interface CheckMeta {
  tool: string;
  tool_version: string;
  packages?: number;
}

/**
 * Check statuses, tier counts and the verdict: `fail` exactly when a blocking finding exists. Every
 * finding's path is escaped here, once for every place that shows it (scan report, manifest, label).
 */
export function assembleReport(input: {
  findings: Finding[];
  /** The secret check's notes, one set per file pass; they never change the verdict or a check. */
  notes?: ScanNotes[];
  capabilities: Capabilities;
  meta: Record<CheckId, CheckMeta>;
  at: Date;
  filesScanned: number;
  binarySkipped: number;
}): ScanReport {
  const at = input.at.toISOString();
  const tierOrder = { blocking: 0, review: 1, disclosed: 2 };
  const findings = input.findings
    .map((f) => (f.path === undefined ? f : { ...f, path: escapeDisplay(f.path) }))
    .sort(
      (a, b) =>
        tierOrder[a.tier] - tierOrder[b.tier] ||
        CHECK_IDS.indexOf(a.check) - CHECK_IDS.indexOf(b.check) ||
        (a.path ?? '').localeCompare(b.path ?? '') ||
        (a.line ?? 0) - (b.line ?? 0) ||
        a.rule_id.localeCompare(b.rule_id),
    );
  const checks: CheckResult[] = CHECK_IDS.map((id) => {
    const own = findings.filter((f) => f.check === id);
    const status = own.some((f) => f.tier === 'blocking') ? 'fail' : own.length > 0 ? 'findings' : 'pass';
    const meta = input.meta[id];
    return {
      id,
      tool: meta.tool,
      tool_version: meta.tool_version,
      status,
      at,
      findings: own.length,
      ...(meta.packages !== undefined ? { packages: meta.packages } : {}),
    };
  });
  const counts = { blocking: 0, disclosed: 0, review: 0 };
  for (const f of findings) counts[f.tier]++;
  const seen = input.notes ?? [];
  const notes: ScanNote[] = seen
    .flatMap((set) => set.notes)
    .map((note) => ({ ...note, path: escapeDisplay(note.path) }))
    .sort((a, b) => a.path.localeCompare(b.path) || a.line - b.line || a.rule_id.localeCompare(b.rule_id));
  const omitted = seen.reduce((n, set) => n + set.omitted, 0) + Math.max(0, notes.length - MAX_SCAN_NOTES);
  return {
    verdict: counts.blocking > 0 ? 'fail' : 'pass',
    scanner_version: SCANNER_VERSION,
    at,
    checks,
    findings,
    capabilities: input.capabilities,
    counts,
    files_scanned: input.filesScanned,
    binary_files_skipped: input.binarySkipped,
    notes: notes.slice(0, MAX_SCAN_NOTES),
    notes_omitted: omitted,
  };
}

/**
 * The scan as the public manifest shows it. No finding carries a line; a secret finding carries
 * neither path nor hint, only that a rule fired (the creator's `scan_report` has path and line).
 */
export function toPublicScan(scan: ScanReport): PublicScan {
  return {
    verdict: scan.verdict,
    scanner_version: scan.scanner_version,
    at: scan.at,
    checks: scan.checks,
    findings: scan.findings.map(({ line: _line, hint: _hint, ...finding }) => {
      if (finding.kind !== 'secret') return finding;
      const { path: _path, ...rest } = finding;
      return rest;
    }),
    capabilities: scan.capabilities,
    counts: scan.counts,
  };
}
