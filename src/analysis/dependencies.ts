import path from 'node:path';
import { parseSyml } from '@yarnpkg/parsers';
import { parse as parseToml } from 'smol-toml';
import { parse as parseYaml } from 'yaml';

/** OSV ecosystem names, so a dependency matches advisories without translation. */
export type Ecosystem = 'npm' | 'PyPI' | 'crates.io' | 'Go';

export interface Dependency {
  ecosystem: Ecosystem;
  name: string;
  /** The resolved version from a lockfile, or an exact pin from a manifest; null when only a range is known. */
  version: string | null;
  direct: boolean;
  dev: boolean;
  /** The manifest or lockfile it was read from. */
  source: string;
}

export interface DependencyAnalysis {
  dependencies: Dependency[];
  /** Manifest and lockfile paths that parsed. */
  manifests: string[];
  /** Paths that looked like manifests but did not parse. */
  unreadable: string[];
}

type Files = Map<string, string>;
interface Direct {
  dev: boolean;
  spec: string;
}

const EXACT_SEMVER = /^v?\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]+)?$/;
const normalisePyPI = (name: string) => name.toLowerCase().replace(/[-_.]+/g, '-');

/**
 * Dependencies from every manifest and lockfile in the tree (outside vendored folders). A lockfile
 * gives resolved versions of everything installed; its manifest says which are direct and dev.
 */
export function analyseDependencies(files: Files): DependencyAnalysis {
  const out = new Map<string, Dependency>();
  const manifests: string[] = [];
  const unreadable: string[] = [];
  const add = (dep: Dependency) => {
    const key = `${dep.ecosystem}\0${dep.name}\0${dep.version ?? ''}`;
    const existing = out.get(key);
    if (!existing) out.set(key, dep);
    else {
      existing.direct ||= dep.direct;
      existing.dev &&= dep.dev;
    }
  };
  const dirs = new Map<string, string[]>();
  for (const filePath of files.keys()) {
    if (/(^|\/)(node_modules|vendor)\//.test(filePath)) continue;
    const dir = path.posix.dirname(filePath);
    const list = dirs.get(dir) ?? [];
    list.push(path.posix.basename(filePath));
    dirs.set(dir, list);
  }
  for (const [dir, names] of dirs) {
    const at = (name: string) => (dir === '.' ? name : `${dir}/${name}`);
    const read = <T>(name: string, parse: (text: string) => T): T | undefined => {
      if (!names.includes(name)) return undefined;
      try {
        const value = parse(files.get(at(name))!);
        manifests.push(at(name));
        return value;
      } catch {
        unreadable.push(at(name));
        return undefined;
      }
    };
    npm(dir, names, read, add, at);
    python(names, read, add, at);
    cargo(read, add, at);
    golang(read, add, at);
  }
  return {
    dependencies: [...out.values()].sort(
      (a, b) => a.ecosystem.localeCompare(b.ecosystem) || a.name.localeCompare(b.name),
    ),
    manifests: manifests.sort(),
    unreadable: unreadable.sort(),
  };
}

type Read = <T>(name: string, parse: (text: string) => T) => T | undefined;
type Add = (dep: Dependency) => void;
type At = (name: string) => string;

function npm(_dir: string, names: string[], read: Read, add: Add, at: At) {
  const pkg = read(
    'package.json',
    (t) => JSON.parse(t) as Record<string, Record<string, string> | undefined>,
  );
  const direct = new Map<string, Direct>();
  for (const [field, dev] of [
    ['dependencies', false],
    ['optionalDependencies', false],
    ['peerDependencies', false],
    ['devDependencies', true],
  ] as const) {
    for (const [name, spec] of Object.entries(pkg?.[field] ?? {})) {
      if (typeof spec === 'string' && !direct.has(name)) direct.set(name, { dev, spec });
    }
  }
  let locked = false;
  const lockName = names.includes('package-lock.json') ? 'package-lock.json' : 'npm-shrinkwrap.json';
  const lock = read(
    lockName,
    (t) =>
      JSON.parse(t) as {
        packages?: Record<string, { version?: string; dev?: boolean; link?: boolean; name?: string }>;
        dependencies?: Record<string, NpmV1Dep>;
      },
  );
  if (lock?.packages) {
    locked = true;
    for (const [key, entry] of Object.entries(lock.packages)) {
      if (!key || entry.link || !entry.version) continue;
      const name = entry.name ?? key.slice(key.lastIndexOf('node_modules/') + 'node_modules/'.length);
      const top = key === `node_modules/${name}`;
      add({
        ecosystem: 'npm',
        name,
        version: entry.version,
        direct: top && direct.has(name),
        dev: entry.dev === true,
        source: at(lockName),
      });
    }
  } else if (lock?.dependencies) {
    locked = true;
    const walk = (deps: Record<string, NpmV1Dep>, top: boolean) => {
      for (const [name, entry] of Object.entries(deps)) {
        if (entry.version && !entry.version.includes(':')) {
          add({
            ecosystem: 'npm',
            name,
            version: entry.version,
            direct: top && direct.has(name),
            dev: entry.dev === true,
            source: at(lockName),
          });
        }
        if (entry.dependencies) walk(entry.dependencies, false);
      }
    };
    walk(lock.dependencies, true);
  }
  const pnpm = read(
    'pnpm-lock.yaml',
    (t) =>
      parseYaml(t) as { packages?: Record<string, { dev?: boolean }>; snapshots?: Record<string, unknown> },
  );
  if (pnpm?.packages) {
    locked = true;
    for (const [key, entry] of Object.entries(pnpm.packages)) {
      // v5/v6: "/name@1.2.3" or "/name/1.2.3"; v9: "name@1.2.3"; peer suffixes in parentheses.
      const clean = key.replace(/^\//, '').replace(/\(.*$/, '');
      const match = /^(@?[^@/]+(?:\/[^@/]+)?)[@/](\d[^/_]*)/.exec(clean);
      if (!match) continue;
      const [, name, version] = match;
      add({
        ecosystem: 'npm',
        name: name!,
        version: version!,
        direct: direct.has(name!),
        dev: entry?.dev === true || direct.get(name!)?.dev === true,
        source: at('pnpm-lock.yaml'),
      });
    }
  }
  const yarn = read('yarn.lock', (t) => parseSyml(t) as Record<string, { version?: string }>);
  if (yarn) {
    locked = true;
    for (const [key, entry] of Object.entries(yarn)) {
      if (key === '__metadata' || !entry?.version) continue;
      const first = key.split(',')[0]!.trim().replace(/^"|"$/g, '');
      const name = first.slice(0, first.indexOf('@', 1));
      if (!name) continue;
      add({
        ecosystem: 'npm',
        name,
        version: entry.version,
        direct: direct.has(name),
        dev: direct.get(name)?.dev === true,
        source: at('yarn.lock'),
      });
    }
  }
  if (!locked && pkg) {
    for (const [name, { dev, spec }] of direct) {
      const exact = EXACT_SEMVER.test(spec) ? spec.replace(/^v/, '') : null;
      add({ ecosystem: 'npm', name, version: exact, direct: true, dev, source: at('package.json') });
    }
  }
}
interface NpmV1Dep {
  version?: string;
  dev?: boolean;
  dependencies?: Record<string, NpmV1Dep>;
}

/** A PEP 508 requirement: name, and a version when pinned with `==`. */
function pep508(spec: string): { name: string; version: string | null } | undefined {
  const match =
    /^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(?:\(?\s*==\s*([A-Za-z0-9.!+_-]+))?/.exec(spec);
  if (!match) return undefined;
  return { name: normalisePyPI(match[1]!), version: match[2] && !match[2].includes('*') ? match[2] : null };
}

function python(names: string[], read: Read, add: Add, at: At) {
  const direct = new Map<string, boolean>();
  const fromRequirements = new Set<string>();
  for (const name of names.filter((n) => /^requirements[^/]*\.txt$/i.test(n))) {
    const dev = /dev|test|lint|doc/i.test(name);
    const lines = read(name, (t) => t.split('\n'));
    for (const raw of lines ?? []) {
      const line = raw.replace(/\s#.*$/, '').trim();
      if (!line || line.startsWith('#') || line.startsWith('-')) continue;
      const req = pep508(line);
      if (!req) continue;
      direct.set(req.name, dev);
      fromRequirements.add(req.name);
      add({ ecosystem: 'PyPI', name: req.name, version: req.version, direct: true, dev, source: at(name) });
    }
  }
  const pyproject = read('pyproject.toml', (t) => parseToml(t) as PyProject);
  if (pyproject) {
    const push = (spec: string, dev: boolean) => {
      const req = pep508(spec);
      if (req) direct.set(req.name, dev);
    };
    for (const spec of pyproject.project?.dependencies ?? []) push(spec, false);
    for (const list of Object.values(pyproject.project?.['optional-dependencies'] ?? {}))
      for (const spec of list) push(spec, false);
    for (const list of Object.values(pyproject['dependency-groups'] ?? {}))
      for (const spec of list) if (typeof spec === 'string') push(spec, true);
    const poetry = pyproject.tool?.poetry;
    for (const name of Object.keys(poetry?.dependencies ?? {}))
      if (name !== 'python') direct.set(normalisePyPI(name), false);
    for (const name of Object.keys(poetry?.['dev-dependencies'] ?? {})) direct.set(normalisePyPI(name), true);
    for (const [group, body] of Object.entries(poetry?.group ?? {})) {
      for (const name of Object.keys(body.dependencies ?? {}))
        direct.set(normalisePyPI(name), group !== 'main');
    }
  }
  const lock = read(
    'poetry.lock',
    (t) =>
      parseToml(t) as {
        package?: Array<{ name: string; version: string; category?: string; groups?: string[] }>;
      },
  );
  if (lock?.package) {
    for (const entry of lock.package) {
      const name = normalisePyPI(entry.name);
      const dev =
        entry.category === 'dev' ||
        (entry.groups !== undefined && !entry.groups.includes('main')) ||
        direct.get(name) === true;
      add({
        ecosystem: 'PyPI',
        name,
        version: entry.version,
        direct: direct.has(name),
        dev,
        source: at('poetry.lock'),
      });
    }
  } else if (pyproject) {
    for (const [name, dev] of direct) {
      if (!fromRequirements.has(name))
        add({ ecosystem: 'PyPI', name, version: null, direct: true, dev, source: at('pyproject.toml') });
    }
  }
}
interface PyProject {
  project?: { dependencies?: string[]; 'optional-dependencies'?: Record<string, string[]> };
  'dependency-groups'?: Record<string, unknown[]>;
  tool?: {
    poetry?: {
      dependencies?: Record<string, unknown>;
      'dev-dependencies'?: Record<string, unknown>;
      group?: Record<string, { dependencies?: Record<string, unknown> }>;
    };
  };
}

function cargo(read: Read, add: Add, at: At) {
  const manifest = read('Cargo.toml', (t) => parseToml(t) as Record<string, unknown>);
  const direct = new Map<string, boolean>();
  for (const [table, dev] of [
    ['dependencies', false],
    ['build-dependencies', false],
    ['dev-dependencies', true],
  ] as const) {
    const deps = (manifest?.[table] ?? {}) as Record<string, unknown>;
    for (const [name, spec] of Object.entries(deps)) {
      const real =
        typeof spec === 'object' && spec && 'package' in spec
          ? String((spec as { package: string }).package)
          : name;
      if (!direct.has(real)) direct.set(real, dev);
    }
  }
  const lock = read(
    'Cargo.lock',
    (t) => parseToml(t) as { package?: Array<{ name: string; version: string; source?: string }> },
  );
  const own = (manifest?.package as { name?: string } | undefined)?.name;
  if (lock?.package) {
    for (const entry of lock.package) {
      if (!entry.source && entry.name === own) continue;
      if (!entry.source) continue; // workspace members, not published crates
      add({
        ecosystem: 'crates.io',
        name: entry.name,
        version: entry.version,
        direct: direct.has(entry.name),
        dev: direct.get(entry.name) === true,
        source: at('Cargo.lock'),
      });
    }
  } else if (manifest) {
    for (const [name, dev] of direct)
      add({ ecosystem: 'crates.io', name, version: null, direct: true, dev, source: at('Cargo.toml') });
  }
}

function golang(read: Read, add: Add, at: At) {
  const mod = read('go.mod', (t) => t);
  if (mod) {
    const requireLines: string[] = [];
    const block = /require\s*\(([\s\S]*?)\)/g;
    for (const m of mod.matchAll(block)) requireLines.push(...m[1]!.split('\n'));
    for (const m of mod.matchAll(/^require\s+([^\s(]+\s+\S+.*)$/gm)) requireLines.push(m[1]!);
    for (const raw of requireLines) {
      const m = /^\s*(\S+)\s+(v\S+)(\s*\/\/\s*indirect)?/.exec(raw);
      if (!m) continue;
      add({ ecosystem: 'Go', name: m[1]!, version: m[2]!, direct: !m[3], dev: false, source: at('go.mod') });
    }
  }
  // go.sum also lists versions that minimal version selection discarded, so it is not a dependency
  // list; since Go 1.17 go.mod names every module the build uses, indirect ones marked.
}
