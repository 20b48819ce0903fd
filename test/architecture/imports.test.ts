import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/process.js';

/**
 * The folders of src/ and what each may import (itself always). The table is the layering in
 * docs/CONTRIBUTING.md: libraries at the bottom, domains above them, each domain only below the
 * ones that use it, so no two folders import each other.
 */
const MAY_IMPORT: Record<string, string[]> = {
  db: [],
  platform: ['db'],
  git: ['platform', 'db'],
  github: ['git', 'platform', 'db'],
  analysis: ['git', 'platform', 'db'],
  scan: ['analysis', 'git', 'platform', 'db'],
  identity: ['platform', 'db'],
  // Signed webhooks: events, subscriptions, deliveries. Below every domain that raises events;
  // what it knows of listings and holdings comes through `WebhookAudience` in the context.
  webhooks: ['identity', 'platform', 'db'],
  // `repo402 backup` and `restore`: the archive of DATA_DIR, its manifest, the repositories' copies.
  // After a restore it reconciles against the chain, through earnings.
  backup: ['earnings', 'purchases', 'x402', 'listings', 'identity', 'git', 'platform', 'db'],
  // Release attestations: statements, keys, DSSE envelopes, verification (the CLI's too).
  attestations: ['platform', 'db'],
  listings: ['identity', 'github', 'git', 'scan', 'analysis', 'platform', 'db'],
  releases: [
    'webhooks',
    'attestations',
    'listings',
    'identity',
    'github',
    'git',
    'analysis',
    'scan',
    'platform',
    'db',
  ],
  // The local chain that stands in for Base: the EDR node, its facilitator, funding, its routes.
  devnet: ['platform', 'db'],
  // The x402 protocol and the rail under it: headers, the 402 body, quotes, the authorization's
  // digest and state, the facilitator and chain (devnet or Base) that settle and pay out.
  x402: ['devnet', 'releases', 'platform', 'db'],
  // The purchase: offers and prices, buying, settlement and its reconciliation, holdings, grants,
  // re-fetches, entitlements, version status.
  purchases: ['webhooks', 'x402', 'attestations', 'releases', 'listings', 'identity', 'platform', 'db'],
  // The creator's money: ledger, sales, payouts and their sweeps.
  earnings: ['purchases', 'x402', 'listings', 'identity', 'platform', 'db'],
  public: [
    'attestations',
    'purchases',
    'x402',
    'devnet',
    'releases',
    'listings',
    'identity',
    'analysis',
    'scan',
    'platform',
    'db',
  ],
  // The operator's moderation: yanks, suspensions, the audit log, domain events, reports.
  moderation: ['webhooks', 'releases', 'listings', 'identity', 'platform', 'db'],
  mcp: ['attestations', 'public', 'purchases', 'x402', 'releases', 'listings', 'identity', 'platform', 'db'],
  // The browser bundle: types from anywhere below, code only from BROWSER_SAFE.
  web: ['scan', 'listings', 'platform', 'identity'],
};
/** Server files whose code the browser bundle may include: pure, no Node built-ins, no database. */
const BROWSER_SAFE = new Set([
  'platform/money/usd.ts',
  'platform/error-catalogue.ts',
  'platform/versions.ts',
  'identity/handles.ts',
  'listings/cut-stages.ts',
]);
/** Files at the top of src/ every folder may import: the shared context and configuration types. */
const CONTRACT = new Set(['context.ts', 'config.ts']);

const SRC = path.join(ROOT, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.tsx?$/.test(entry.name) ? [full] : [];
  });
}

/** `./x.js` names `x.ts` or, in the web app, `x.tsx`. */
function sourceOf(file: string, spec: string): string {
  const resolved = path.resolve(path.dirname(file), spec).replace(/\.js$/, '.ts');
  return existsSync(resolved) || !existsSync(`${resolved}x`) ? resolved : `${resolved}x`;
}

/** Every relative import, re-export and dynamic import of every file, resolved to a file of src/. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = info.importedFiles
      .map((ref) => ref.fileName)
      .filter((spec) => spec.startsWith('.'))
      .map((spec) => path.relative(SRC, sourceOf(file, spec)));
    graph.set(path.relative(SRC, file), targets);
  }
  return graph;
}

const folderOf = (file: string) => (file.includes(path.sep) ? file.split(path.sep)[0]! : undefined);
const isStore = (file: string) => /(^|[-/])store\.ts$/.test(file);

/** Strongly connected components with more than one file (Tarjan), each a cycle of imports. */
function cycles(graph: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string) => {
    index.set(node, counter);
    low.set(node, counter);
    counter += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

/** Imports from a folder into one above it (or one its row of MAY_IMPORT does not name), as `from -> to`. */
function upwardImports(edges: Array<{ from: string; to: string }>): string[] {
  return edges
    .filter(({ from, to }) => {
      const source = folderOf(from);
      const target = folderOf(to);
      if (!source) return false; // the composition root (app.ts, runtime.ts, cli.ts, …)
      if (!target) return !CONTRACT.has(to);
      return source !== target && !MAY_IMPORT[source]!.includes(target);
    })
    .map(({ from, to }) => `${from} -> ${to}`);
}

describe('the import graph of src/', () => {
  const graph = importGraph();
  const edges = [...graph].flatMap(([from, targets]) => targets.map((to) => ({ from, to })));

  it('knows every folder of src/', () => {
    const folders = new Set([...graph.keys()].map(folderOf).filter(Boolean));
    expect([...folders].sort()).toEqual(Object.keys(MAY_IMPORT).sort());
  });

  it('only imports downwards between folders', () => {
    expect(upwardImports(edges)).toEqual([]);
  });

  it('refuses an import against the table, between the payment folders as between any', () => {
    const planted = [
      { from: 'devnet/chain.ts', to: 'x402/rail.ts' },
      { from: 'x402/payment-required.ts', to: 'purchases/pricing.ts' },
      { from: 'purchases/buy.ts', to: 'earnings/payouts.ts' },
      { from: 'earnings/payouts.ts', to: 'x402/rail.ts' },
    ];
    expect(upwardImports(planted)).toEqual([
      'devnet/chain.ts -> x402/rail.ts',
      'x402/payment-required.ts -> purchases/pricing.ts',
      'purchases/buy.ts -> earnings/payouts.ts',
    ]);
  });

  it('is a layering: no two folders may import each other, through any chain of folders', () => {
    const reaches = (from: string, seen = new Set<string>()): Set<string> => {
      for (const next of MAY_IMPORT[from] ?? []) {
        if (!seen.has(next)) {
          seen.add(next);
          reaches(next, seen);
        }
      }
      return seen;
    };
    const circular = Object.keys(MAY_IMPORT).filter((folder) => reaches(folder).has(folder));
    expect(circular).toEqual([]);
  });

  it("never lets a domain import another domain's store", () => {
    const wrong = edges
      .filter(({ from, to }) => folderOf(from) && folderOf(to) !== folderOf(from) && isStore(to))
      .map(({ from, to }) => `${from} -> ${to}`);
    expect(wrong).toEqual([]);
  });

  it('lets the browser bundle take only types, and code from browser-safe files, from the server', () => {
    const wrong = [...graph.keys()]
      .filter((file) => folderOf(file) === 'web')
      .flatMap((file) =>
        staticImports(file)
          .filter((to) => folderOf(to) !== 'web' && !BROWSER_SAFE.has(to))
          .map((to) => `${file} -> ${to}`),
      );
    expect(wrong).toEqual([]);
  });

  it('has no import cycles between files', () => {
    expect(cycles(graph)).toEqual([]);
  });

  it("keeps the tree analysis's modules out of the server's own thread (only its worker loads them)", () => {
    const loaded = new Set<string>();
    const visit = (file: string) => {
      if (loaded.has(file)) return;
      loaded.add(file);
      for (const to of staticImports(file)) visit(to);
    };
    for (const root of ['cli.ts', 'server.ts', 'runtime.ts', 'app.ts']) visit(root);
    expect(loaded.has('releases/inspection/inspect.ts')).toBe(true);
    const analysisOnly = [
      'releases/inspection/analyse-tree.ts',
      'analysis/languages.ts',
      'analysis/readme.ts',
      'analysis/sbom.ts',
    ];
    expect(analysisOnly.filter((file) => loaded.has(file))).toEqual([]);
  });
});

/** A file's relative imports and re-exports that load code as the file loads (no `import type`, no `import()`). */
function staticImports(file: string): string[] {
  const full = path.join(SRC, file);
  return [...readFileSync(full, 'utf8').matchAll(/^(?:import|export)\s+(type\s+)?[^;]*?from\s+'([^']+)'/gms)]
    .filter(([, typeOnly, spec]) => !typeOnly && spec!.startsWith('.'))
    .map(([, , spec]) => path.relative(SRC, sourceOf(full, spec!)));
}
