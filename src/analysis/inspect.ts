import path from 'node:path';
import type { AppContext } from '../context.js';
import { ensureAdvisorySeed } from '../scan/advisory-import.js';
import { advisoryDatasetStamp } from '../scan/advisory-store.js';
import { installBehaviour } from '../scan/behaviour.js';
import { checkDependencies } from '../scan/dependency-checks.js';
import { checkLimits, withinTotals } from '../scan/limits.js';
import { assembleReport, SCANNER_VERSION, summariseCapabilities } from '../scan/report.js';
import { SECRET_RULES } from '../scan/secret-rules.js';
import type { CheckId, ScanReport } from '../scan/types.js';
import { analyseCadence, cadenceSentence } from './cadence.js';
import { analyseComponents, type ComponentFile, componentsTouched, inventorySentence } from './components.js';
import { analyseDependencies } from './dependencies.js';
import { type DiffSummary, diffCommits } from './diff.js';
import { engineeringMetrics } from './engineering.js';
import type { FileFacts, PassResult } from './file-pass.js';
import { listTree } from './git.js';
import { extensionOf, isGenerated, isVendored } from './languages.js';
import { analyseLicence } from './licence.js';
import { MIN_BLOB_BYTES, recordAndCompareBlobs } from './originality.js';
import { findReadme, renderReadme } from './readme.js';
import { buildSbom } from './sbom.js';
import { runTreePass } from './tree-pass.js';
import type { Computed } from './types.js';

export { toPublicScan } from '../scan/report.js';
export type { PublicScan, ScanReport } from '../scan/types.js';
export type { DiffSummary } from './diff.js';
export type { Computed } from './types.js';

export const ANALYZER_VERSION = '1.0.0';

export interface InspectInput {
  repoPath: string;
  commit: string;
  listing: { id: string; owner: string; slug: string };
  version: string;
  publishedAt: Date;
  /** Earlier releases of this listing, oldest first. */
  previous: Array<{ version: string; commitSha: string; publishedAt: Date }>;
}

export interface InspectResult {
  computed: Computed;
  scan: ScanReport;
  verdict: 'pass' | 'fail';
  analyzerVersion: string;
  scannerVersion: string;
  sbom: string | null;
  diffSummary: DiffSummary;
}

/** Options for tests and benchmarks: worker threads for the file pass (0 = in-process). */
export interface InspectOptions {
  workers?: number;
}

/**
 * Analyses and scans one release: one streaming read of the commit's files (in worker threads)
 * feeds every `computed` field and every per-file check; dependency checks and originality use
 * the database. Nothing from the repository is executed.
 */
export async function inspectRelease(
  ctx: AppContext,
  input: InspectInput,
  options: InspectOptions = {},
): Promise<InspectResult> {
  const db = ctx.database.db;
  const now = ctx.clock.now();
  const channel = `${input.listing.owner}/${input.listing.slug}`;
  const entries = await listTree(input.repoPath, input.commit);
  const limitFindings = checkLimits(entries);
  const previous = input.previous.at(-1);
  // Started before the pass and awaited before any database write, so a bad commit records nothing.
  const changes = previous ? diffCommits(input.repoPath, previous.commitSha, input.commit) : undefined;
  changes?.catch(() => {});

  // Past the size limits the release is blocked anyway: skip reading contents.
  const passes: PassResult[] = withinTotals(entries)
    ? await runTreePass(
        input.repoPath,
        entries.map((e, index) => ({ ...e, index })),
        options.workers,
      )
    : [];
  const facts = new Array<FileFacts | undefined>(entries.length);
  for (const pass of passes) for (const f of pass.facts) facts[f.index] = f;
  const kept = new Map<string, string>();
  for (const pass of passes) for (const k of pass.kept) kept.set(k.path, k.text);

  const files = entries.map((entry, i) => {
    const fact = facts[i];
    return { ...entry, binary: fact?.binary ?? false, fact };
  });
  const analysed = files.filter((f) => !isVendored(f.path) && !isGenerated(f.path));
  const languages: Record<string, number> = {};
  let linesOfCode = 0;
  let codeFiles = 0;
  for (const file of analysed) {
    const fact = file.fact;
    if (!fact?.language || fact.languageType === 'data') continue;
    languages[fact.language] = (languages[fact.language] ?? 0) + file.size;
    if (fact.languageType === 'programming' || fact.languageType === 'markup') linesOfCode += fact.sloc;
    if (fact.languageType === 'programming') codeFiles++;
  }
  const extensions: Record<string, number> = {};
  for (const file of files) {
    const ext = extensionOf(file.path);
    extensions[ext] = (extensions[ext] ?? 0) + 1;
  }

  const readmePath = findReadme(kept.keys());
  const readmeText = readmePath ? kept.get(readmePath) : undefined;
  const deps = analyseDependencies(kept);
  const componentFiles: ComponentFile[] = analysed.map((f) => ({
    path: f.path,
    mode: f.mode,
    binary: f.binary,
    languageType: f.fact?.languageType ?? null,
    test: f.fact?.test ?? false,
    mcpServer: f.fact?.mcpServer ?? false,
    shebang: f.fact?.shebang ?? false,
  }));
  const components = analyseComponents(componentFiles, kept);
  const cadence = analyseCadence(
    [...input.previous.map((p) => p.publishedAt), input.publishedAt],
    now,
    readmeText,
  );
  const engineering = engineeringMetrics(passes, {
    codeFiles,
    testFiles: files.filter((f) => f.fact?.test).length,
  });

  const diff = changes
    ? await changes
    : {
        added: entries.map((e) => e.path),
        changed: [],
        removed: [],
        additions: files.reduce((n, f) => n + (f.fact && !f.fact.binary ? f.fact.lines : 0), 0),
        deletions: 0,
      };
  const blobShas = entries.filter((e) => e.size >= MIN_BLOB_BYTES && e.mode !== '120000').map((e) => e.sha);
  const originality = await recordAndCompareBlobs(db, {
    listingId: input.listing.id,
    channel,
    version: input.version,
    recordedAt: input.publishedAt,
    blobShas,
  });

  await ensureAdvisorySeed(db, now);
  const [dependencyScan, dataset] = await Promise.all([
    checkDependencies(db, deps.dependencies),
    advisoryDatasetStamp(db),
  ]);
  const behaviour = installBehaviour(
    kept,
    entries.map((e) => e.path),
  );
  const capabilityScan = summariseCapabilities({
    hosts: passes.flatMap((p) => p.hosts),
    env: passes.flatMap((p) => p.env),
    tools: passes.flatMap((p) => p.tools),
    runs: [...behaviour.runs, ...components.runs],
    installRuns: behaviour.findings.length > 0,
  });
  const osvStamp = `${SCANNER_VERSION}+osv.${dataset.records}${dataset.newest ? `.${dataset.newest.toISOString().slice(0, 10)}` : ''}`;
  const meta: Record<CheckId, { tool: string; tool_version: string; packages?: number }> = {
    secrets: { tool: 'repo402-secrets', tool_version: `${SCANNER_VERSION}+rules.${SECRET_RULES.length}` },
    limits: { tool: 'repo402-limits', tool_version: SCANNER_VERSION },
    known_vulns: { tool: 'repo402-osv', tool_version: osvStamp, packages: dependencyScan.checked },
    known_malware: { tool: 'repo402-osv', tool_version: osvStamp, packages: dependencyScan.checked },
    dep_behaviour: {
      tool: 'repo402-behaviour',
      tool_version: SCANNER_VERSION,
      packages: deps.dependencies.length,
    },
    capabilities: { tool: 'repo402-capabilities', tool_version: SCANNER_VERSION },
    injection: { tool: 'repo402-unicode', tool_version: SCANNER_VERSION },
  };
  const scan = assembleReport({
    findings: [
      ...limitFindings,
      ...passes.flatMap((p) => p.findings),
      ...dependencyScan.findings,
      ...behaviour.findings,
      ...capabilityScan.findings,
    ],
    capabilities: capabilityScan.capabilities,
    meta,
    at: now,
    filesScanned: passes.reduce((n, p) => n + p.filesScanned, 0),
    binarySkipped: passes.reduce((n, p) => n + p.binarySkipped, 0),
  });

  const diffSummary: DiffSummary = {
    files_added: diff.added.length,
    files_changed: diff.changed.length,
    files_removed: diff.removed.length,
    additions: diff.additions,
    deletions: diff.deletions,
    components_touched: componentsTouched(components.components, [
      ...diff.added,
      ...diff.changed,
      ...diff.removed,
    ]),
  };

  const sbomAvailable = deps.manifests.length > 0;
  const warnings = sbomAvailable ? [] : ['sbom_unavailable'];
  const computed: Computed = {
    artifact_class: components.artifactClass,
    component_inventory: components.inventory,
    file_count: entries.length,
    dir_depth: entries.reduce((max, e) => Math.max(max, e.path.split('/').length - 1), 0),
    bytes_text: files.reduce((n, f) => n + (f.binary ? 0 : f.size), 0),
    bytes_binary: files.reduce((n, f) => n + (f.binary ? f.size : 0), 0),
    lines_of_code: linesOfCode,
    languages: Object.fromEntries(
      Object.entries(languages).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])),
    ),
    tree: files.map((f) => ({ path: f.path, size: f.size, binary: f.binary })),
    readme_html:
      readmePath && readmeText !== undefined ? renderReadme(readmeText, path.posix.basename(readmePath)) : '',
    dependencies: deps.dependencies,
    licence: analyseLicence(kept),
    cadence_sentence: cadenceSentence(cadence),
    inventory_sentence: inventorySentence(components, entries.length, languages),
    originality,
    engineering,
    cadence,
    extensions: Object.fromEntries(
      Object.entries(extensions).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])),
    ),
    warnings,
    repo_meta: null,
    owner: null,
    computed_at: now.toISOString(),
    analyzer_version: ANALYZER_VERSION,
  };
  return {
    computed,
    scan,
    verdict: scan.verdict,
    analyzerVersion: ANALYZER_VERSION,
    scannerVersion: SCANNER_VERSION,
    sbom: sbomAvailable
      ? buildSbom({
          channel,
          version: input.version,
          publishedAt: input.publishedAt,
          dependencies: deps.dependencies,
          toolVersion: ANALYZER_VERSION,
        })
      : null,
    diffSummary,
  };
}
