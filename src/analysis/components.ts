import path from 'node:path';
import { parse as parseYaml } from 'yaml';

export type ComponentKind =
  | 'skill'
  | 'agent'
  | 'command'
  | 'hook'
  | 'mcp_server'
  | 'plugin'
  | 'library'
  | 'script'
  | 'test'
  | 'doc';
export const COMPONENT_KINDS: ComponentKind[] = [
  'skill',
  'agent',
  'command',
  'hook',
  'mcp_server',
  'plugin',
  'library',
  'script',
  'test',
  'doc',
];
/** Kinds an agent loads or runs directly; the others are supporting material. */
const AGENT_KINDS: ComponentKind[] = ['skill', 'agent', 'command', 'hook', 'mcp_server'];

export interface Component {
  kind: ComponentKind;
  name: string;
  /** A directory (skills, libraries) or file the component consists of. */
  root: string;
  rootIsDir: boolean;
}

export interface ComponentFile {
  path: string;
  mode: string;
  binary: boolean;
  languageType: string | null;
  test: boolean;
  mcpServer: boolean;
  shebang: boolean;
}

export interface ComponentAnalysis {
  components: Component[];
  inventory: Array<{ kind: ComponentKind; count: number }>;
  artifactClass: string;
  /** Commands that run automatically: hooks and configured MCP servers. */
  runs: string[];
}

function frontmatter(text: string): Record<string, unknown> | undefined {
  const match = /^(?:\uFEFF)?---\r?\n([\s\S]*?)\r?\n---\r?\n?/.exec(text);
  if (!match) return undefined;
  try {
    const value = parseYaml(match[1]!) as unknown;
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
const hasText = (value: unknown) => typeof value === 'string' && value.trim().length > 0;
function json(text: string | undefined): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  try {
    const value = JSON.parse(text) as unknown;
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
const dirOf = (p: string) => path.posix.dirname(p);

/**
 * What the repository is made of, detected from file contents (frontmatter, configuration keys,
 * code constructs), not from names alone. Kinds and classes are defined in docs/ANALYSIS.md.
 */
export function analyseComponents(files: ComponentFile[], kept: Map<string, string>): ComponentAnalysis {
  const components: Component[] = [];
  const runs: string[] = [];
  const add = (kind: ComponentKind, name: string, root: string, rootIsDir = false) =>
    components.push({ kind, name, root, rootIsDir });
  // A package at the repository root spans every file: its root is its manifest (see componentsTouched).
  const addLibrary = (name: string, manifest: string) =>
    dirOf(manifest) === '.' ? add('library', name, manifest) : add('library', name, dirOf(manifest), true);
  const claimed = new Set<string>();

  for (const [filePath, text] of kept) {
    const base = path.posix.basename(filePath);
    if (base === 'SKILL.md') {
      const fm = frontmatter(text);
      if (fm && hasText(fm.name) && hasText(fm.description)) {
        add('skill', String(fm.name), dirOf(filePath), true);
        claimed.add(filePath);
      }
    } else if (/(^|\/)agents\/.+\.md$/i.test(filePath)) {
      const fm = frontmatter(text);
      if (fm && hasText(fm.name) && hasText(fm.description)) {
        add('agent', String(fm.name), filePath);
        claimed.add(filePath);
      }
    } else if (/(^|\/)commands\/.+\.md$/i.test(filePath)) {
      const fm = frontmatter(text);
      if (
        (fm && (hasText(fm.description) || fm['allowed-tools'] || fm['argument-hint'])) ||
        text.includes('$ARGUMENTS')
      ) {
        const name = filePath
          .replace(/^.*?(^|\/)commands\//, '')
          .replace(/\.md$/i, '')
          .replaceAll('/', ':');
        add('command', name, filePath);
        claimed.add(filePath);
      }
    } else if (base === 'hooks.json' || /(^|\/)\.claude\/settings(\.local)?\.json$/.test(filePath)) {
      const hooks = json(text)?.hooks;
      if (hooks && typeof hooks === 'object') {
        for (const [event, matchers] of Object.entries(hooks as Record<string, unknown>)) {
          if (!Array.isArray(matchers)) continue;
          for (const entry of matchers as Array<{
            matcher?: string;
            hooks?: Array<{ type?: string; command?: string }>;
          }>) {
            for (const hook of entry?.hooks ?? []) {
              if (hook?.type !== 'command' || !hasText(hook.command)) continue;
              add('hook', `${event}:${entry.matcher || '*'}`, filePath);
              runs.push(`hook ${event}: ${hook.command}`);
            }
          }
        }
      }
    } else if (base === '.mcp.json' || base === 'mcp.json') {
      const servers = json(text)?.mcpServers;
      if (servers && typeof servers === 'object') {
        for (const [name, server] of Object.entries(
          servers as Record<string, { command?: string; args?: string[]; url?: string }>,
        )) {
          add('mcp_server', name, filePath);
          if (hasText(server?.command))
            runs.push(`mcp server ${name}: ${[server.command, ...(server.args ?? [])].join(' ')}`);
        }
      }
    } else if (/(^|\/)\.claude-plugin\/plugin\.json$/.test(filePath)) {
      const plugin = json(text);
      if (plugin && hasText(plugin.name)) add('plugin', String(plugin.name), dirOf(dirOf(filePath)), true);
    } else if (base === 'package.json' && !/(^|\/)node_modules\//.test(filePath)) {
      const pkg = json(text);
      if (pkg && hasText(pkg.name) && (pkg.main || pkg.exports || pkg.module || pkg.bin))
        addLibrary(String(pkg.name), filePath);
    } else if (base === 'pyproject.toml') {
      const name = /^\[(?:project|tool\.poetry)\][^[]*?^name\s*=\s*"([^"]+)"/ms.exec(text)?.[1];
      if (name) addLibrary(name, filePath);
    } else if (base === 'Cargo.toml') {
      const name = /^\[package\][^[]*?^name\s*=\s*"([^"]+)"/ms.exec(text)?.[1];
      if (name) addLibrary(name, filePath);
    } else if (base === 'go.mod') {
      const name = /^module\s+(\S+)/m.exec(text)?.[1];
      if (name) addLibrary(name, filePath);
    }
  }
  const configuredServers = components.some((c) => c.kind === 'mcp_server');
  for (const file of files) {
    if (file.binary || claimed.has(file.path)) continue;
    if (file.mcpServer && !configuredServers) add('mcp_server', file.path, file.path);
    if (file.test) add('test', file.path, file.path);
    else if (
      file.languageType === 'programming' &&
      (file.shebang || file.mode === '100755' || /(^|\/)(scripts|bin)\/[^/]+$/.test(file.path))
    ) {
      add('script', file.path, file.path);
    } else if (
      /\.(md|mdx|markdown|rst|adoc|txt)$/i.test(file.path) &&
      !/(^|\/)(license|licence|copying)/i.test(file.path)
    )
      add('doc', file.path, file.path);
  }

  const counts = new Map<ComponentKind, number>();
  for (const c of components) counts.set(c.kind, (counts.get(c.kind) ?? 0) + 1);
  const inventory = COMPONENT_KINDS.filter((k) => counts.has(k)).map((kind) => ({
    kind,
    count: counts.get(kind)!,
  }));
  const codeFiles = files.filter((f) => f.languageType === 'programming').length;
  return { components, inventory, artifactClass: artifactClass(counts, codeFiles), runs };
}

/** The classes, in the order they are tried (docs/ANALYSIS.md). */
function artifactClass(counts: Map<ComponentKind, number>, codeFiles: number): string {
  const n = (kind: ComponentKind) => counts.get(kind) ?? 0;
  const agentKinds = AGENT_KINDS.filter((k) => n(k) > 0);
  if (agentKinds.length === 0) {
    if (n('library') > 0) return 'Library';
    if (codeFiles > 0) return 'Application';
    if (n('doc') > 0) return 'Documentation';
    return 'Other';
  }
  if (n('hook') > 0 && (n('agent') > 0 || n('command') > 0)) return 'Harness';
  if (agentKinds.length >= 2 || n('plugin') > 0) return 'Toolkit';
  switch (agentKinds[0]) {
    case 'skill':
      return n('skill') === 1 ? 'Skill' : 'Skill pack';
    case 'mcp_server':
      return 'MCP server';
    case 'agent':
      return 'Agent pack';
    case 'command':
      return 'Command pack';
    default:
      return 'Hook set';
  }
}

const KIND_NOUN: Record<ComponentKind, [string, string]> = {
  skill: ['skill', 'skills'],
  agent: ['agent', 'agents'],
  command: ['command', 'commands'],
  hook: ['hook', 'hooks'],
  mcp_server: ['MCP server', 'MCP servers'],
  plugin: ['plugin manifest', 'plugin manifests'],
  library: ['library package', 'library packages'],
  script: ['script', 'scripts'],
  test: ['test file', 'test files'],
  doc: ['document', 'documents'],
};

export function listing(items: string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

export function inventorySentence(
  analysis: ComponentAnalysis,
  fileCount: number,
  languages: Record<string, number>,
): string {
  const parts = analysis.inventory.map(
    ({ kind, count }) => `${count} ${KIND_NOUN[kind][count === 1 ? 0 : 1]}`,
  );
  const total = Object.values(languages).reduce((a, b) => a + b, 0);
  const top = Object.entries(languages)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 2)
    .filter(([, bytes]) => total > 0 && bytes / total >= 0.1)
    .map(([name, bytes]) => `${name} ${Math.round((bytes / total) * 100)}%`);
  const what = parts.length > 0 ? `: ${listing(parts)}` : '';
  const files = `${fileCount} ${fileCount === 1 ? 'file' : 'files'}`;
  return `${analysis.artifactClass}${what}, in ${files}${top.length > 0 ? ` (${top.join(', ')})` : ''}.`;
}

const isRootPackage = (c: Component) => c.kind === 'library' && !c.rootIsDir && dirOf(c.root) === '.';

/**
 * Labels of the components a set of changed paths touches (`skill:<name>`, `tests`, …). A package
 * at the repository root owns every changed path that no narrower component claims, its manifest
 * included: otherwise a change to its own source would touch nothing.
 */
export function componentsTouched(components: Component[], changed: string[]): string[] {
  const labels = new Set<string>();
  const generic: Partial<Record<ComponentKind, string>> = { test: 'tests', doc: 'docs', script: 'scripts' };
  const label = (c: Component) => generic[c.kind] ?? `${c.kind}:${c.name}`;
  const rootPackages = components.filter(isRootPackage);
  const every = new Set(components.map(label)).size;
  for (const file of changed) {
    // A first release changes every file: once every component is named, the rest adds nothing.
    if (labels.size === every) break;
    let claimed = false;
    for (const c of components) {
      if (isRootPackage(c)) continue;
      const inside = c.rootIsDir
        ? c.root === '.' || file === c.root || file.startsWith(`${c.root}/`)
        : file === c.root;
      if (!inside) continue;
      labels.add(label(c));
      claimed = true;
    }
    if (!claimed) for (const c of rootPackages) labels.add(label(c));
  }
  return [...labels].sort();
}
