import path from 'node:path';
import { analyseCadence, cadenceSentence } from '../../analysis/cadence.js';
import {
  analyseComponents,
  type ComponentFile,
  componentsTouched,
  inventorySentence,
} from '../../analysis/components.js';
import { analyseDependencies } from '../../analysis/dependencies.js';
import { diffCommits } from '../../analysis/diff.js';
import { engineeringMetrics } from '../../analysis/engineering.js';
import { listTree } from '../../analysis/git.js';
import { countsTowardsLanguages, extensionOf, isGenerated, isVendored } from '../../analysis/languages.js';
import { analyseLicence } from '../../analysis/licence.js';
import { findReadme, renderReadme } from '../../analysis/readme.js';
import { buildSbom } from '../../analysis/sbom.js';
import { installBehaviour } from '../../scan/behaviour.js';
import { checkLimits, withinTotals } from '../../scan/limits.js';
import { checkPaths } from '../../scan/paths.js';
import { summariseCapabilities } from '../../scan/report.js';
import { MAX_FILE_BYTES, unreadFile } from './file-pass.js';
import { decodeFileResults, encodeFileResults } from './file-results.js';
import {
  ANALYZER_VERSION,
  encodeTreeParts,
  type TreeAnalysis,
  type TreeAnalysisInput,
} from './tree-analysis.js';
import { passOverTree } from './tree-pass.js';

/** Blobs this small (empty files, one-line configs) are shared by chance and say nothing about copying. */
const MIN_BLOB_BYTES = 64;
const NO_LINES = { code: { all: 0, sampled: 0 }, doc: { all: 0, sampled: 0 } };

export async function analyseTree(input: TreeAnalysisInput): Promise<TreeAnalysis> {
  const entries = await listTree(input.repoPath, input.commit, input.treeLimits);
  const changes = input.previousCommit
    ? diffCommits(input.repoPath, input.previousCommit, input.commit)
    : undefined;
  changes?.catch(() => {});

  // Past the size limits the release is blocked anyway: skip reading contents.
  const pass = withinTotals(entries)
    ? await passOverTree(input.repoPath, entries, decodeFileResults(input.earlierResults), input.workers)
    : undefined;
  const results = pass?.results ?? entries.map((e) => unreadFile(e.mode));
  const kept = pass?.kept ?? new Map<string, string>();
  const links = new Map<string, string>();
  entries.forEach((e, i) => {
    const link = results[i]!.link;
    if (link !== undefined) links.set(e.path, link);
  });

  const files = entries.map((entry, i) => {
    const fact = pass ? results[i]!.facts : undefined;
    return { ...entry, binary: fact?.binary ?? false, fact };
  });
  const analysed = files.filter((f) => !isVendored(f.path) && !isGenerated(f.path));
  const languages: Record<string, number> = {};
  let linesOfCode = 0;
  let codeFiles = 0;
  for (const file of analysed) {
    const fact = file.fact;
    if (!fact?.language) continue;
    if (countsTowardsLanguages(file.path, fact.languageType))
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
  const cadence = analyseCadence([...input.earlierDates, input.publishedAt], input.now, readmeText);
  const engineering = engineeringMetrics(pass?.samples ?? [], pass?.lines ?? NO_LINES, {
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
  const behaviour = installBehaviour(
    kept,
    entries.map((e) => e.path),
  );
  const capabilityScan = summariseCapabilities({
    hosts: entries.flatMap((e, i) => results[i]!.hosts.map((h) => ({ ...h, path: e.path }))),
    env: entries.flatMap((e, i) => results[i]!.env.map((name) => ({ name, path: e.path }))),
    tools: entries.flatMap((e, i) => results[i]!.tools.map((name) => ({ name, path: e.path }))),
    runs: [...behaviour.runs, ...components.runs],
    installRuns: behaviour.findings.length > 0,
  });

  const sbomAvailable = deps.manifests.length > 0;
  return {
    computed: {
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
      readme_html:
        readmePath && readmeText !== undefined
          ? renderReadme(readmeText, path.posix.basename(readmePath))
          : '',
      dependencies: deps.dependencies,
      licence: analyseLicence(kept),
      cadence_sentence: cadenceSentence(cadence),
      inventory_sentence: inventorySentence(components, entries.length, languages),
      engineering,
      cadence,
      extensions: Object.fromEntries(
        Object.entries(extensions).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])),
      ),
      warnings: [
        ...(sbomAvailable ? [] : ['sbom_unavailable']),
        // Declared but not resolved: a range without a lockfile has no version to check advisories against.
        ...(deps.dependencies.some((d) => d.version === null) ? ['no_lockfile'] : []),
      ],
      repo_meta: null,
      owner: null,
      computed_at: input.now.toISOString(),
      analyzer_version: ANALYZER_VERSION,
    },
    treeParts: encodeTreeParts(files.map((f) => ({ path: f.path, size: f.size, binary: f.binary }))),
    findings: [
      ...checkLimits(entries),
      ...checkPaths(entries, links),
      ...results.flatMap((r) => r.findings),
      ...behaviour.findings,
      ...capabilityScan.findings,
    ],
    notes: results.map((r) => r.notes),
    capabilities: capabilityScan.capabilities,
    dependencies: deps.dependencies,
    blobShas: entries.filter((e) => e.size >= MIN_BLOB_BYTES && e.mode !== '120000').map((e) => e.sha),
    fileResults: pass ? encodeFileResults(pass.keep) : undefined,
    filesRead: pass?.read ?? 0,
    filesReused: pass?.reused ?? 0,
    filesScanned: results.filter((r) => r.scanned).length,
    binarySkipped: pass
      ? results.filter((r, i) => r.facts.binary && entries[i]!.size <= MAX_FILE_BYTES).length
      : 0,
    sbom: sbomAvailable
      ? buildSbom({
          channel: input.channel,
          version: input.version,
          publishedAt: input.publishedAt,
          dependencies: deps.dependencies,
          toolVersion: ANALYZER_VERSION,
        })
      : null,
    diffSummary: {
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
    },
  };
}
