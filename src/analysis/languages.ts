import path from 'node:path';
import { LINGUIST, type LinguistEntry } from './linguist-table.js';

export type LanguageType = LinguistEntry['type'];
export interface Language {
  name: string;
  type: LanguageType;
}

/** Ambiguous extensions resolve to the first of these that claims them (no content heuristics: see docs/ANALYSIS.md). */
const PREFERENCE = [
  'TypeScript',
  'JavaScript',
  'Python',
  'Markdown',
  'C',
  'C++',
  'Objective-C',
  'Rust',
  'Go',
  'Java',
  'Kotlin',
  'C#',
  'Shell',
  'Ruby',
  'PHP',
  'Perl',
  'MATLAB',
  'SQL',
  'PLpgSQL',
  'JSON',
  'YAML',
  'TOML',
  'INI',
  'XML',
  'HTML',
  'CSS',
  'Text',
];
const rank = (name: string) => {
  const at = PREFERENCE.indexOf(name);
  return at < 0 ? PREFERENCE.length : at;
};

interface Tables {
  byExtension: Map<string, Language>;
  byFilename: Map<string, Language>;
  byInterpreter: Map<string, Language>;
}
let tables: Tables | undefined;

function build(): Tables {
  const candidates = new Map<string, Array<{ lang: Language; primary: boolean }>>();
  const byFilename = new Map<string, Language>();
  const byInterpreter = new Map<string, Language>();
  for (const [name, entry] of Object.entries(LINGUIST)) {
    const lang = { name, type: entry.type };
    (entry.extensions ?? []).forEach((ext, i) => {
      const key = ext.toLowerCase();
      const list = candidates.get(key) ?? [];
      list.push({ lang, primary: i === 0 });
      candidates.set(key, list);
    });
    for (const file of entry.filenames ?? []) {
      const current = byFilename.get(file);
      if (!current || rank(name) < rank(current.name)) byFilename.set(file, lang);
    }
    for (const interpreter of entry.interpreters ?? []) {
      const current = byInterpreter.get(interpreter);
      if (!current || rank(name) < rank(current.name)) byInterpreter.set(interpreter, lang);
    }
  }
  const byExtension = new Map<string, Language>();
  for (const [ext, list] of candidates) {
    const primaries = list.filter((c) => c.primary);
    const pool = primaries.length > 0 ? primaries : list;
    pool.sort(
      (a, b) =>
        rank(a.lang.name) - rank(b.lang.name) ||
        Number(b.lang.type === 'programming') - Number(a.lang.type === 'programming'),
    );
    byExtension.set(ext, pool[0]!.lang);
  }
  return { byExtension, byFilename, byInterpreter };
}

/** The file's language from its name, or, for names without a known extension, its shebang line. */
export function detectLanguage(filePath: string, firstLine?: string): Language | undefined {
  tables ??= build();
  const base = path.posix.basename(filePath);
  const byName = tables.byFilename.get(base);
  if (byName) return byName;
  const ext = path.posix.extname(base).toLowerCase();
  const byExt = ext ? tables.byExtension.get(ext) : undefined;
  if (byExt) return byExt;
  if (firstLine?.startsWith('#!')) {
    const words = firstLine.slice(2).trim().split(/\s+/);
    let interpreter = path.posix.basename(words[0] ?? '');
    if (interpreter === 'env') interpreter = words.find((w, i) => i > 0 && !w.startsWith('-')) ?? '';
    return (
      tables.byInterpreter.get(interpreter.replace(/[0-9.]+$/, '')) ?? tables.byInterpreter.get(interpreter)
    );
  }
  return undefined;
}

/** `.ts`, or `(none)` for names without an extension (dotfiles such as `.gitignore` included). */
export function extensionOf(filePath: string): string {
  const ext = path.posix.extname(path.posix.basename(filePath)).toLowerCase();
  return ext || '(none)';
}

// linguist's vendor.yml and generated.rb, reduced to the paths that occur in practice.
const VENDORED =
  /(^|\/)(node_modules|bower_components|vendor|vendors|third[_-]party|\.yarn|\.pnpm-store|jspm_packages|Pods|Carthage|\.venv|venv|site-packages|__pycache__)\/|(^|\/)dist\/|\.min\.(js|css)$|-min\.js$|(^|\/)(jquery|bootstrap)[^/]*\.js$/i;
const GENERATED =
  /(^|\/)(package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml|Cargo\.lock|poetry\.lock|Pipfile\.lock|composer\.lock|Gemfile\.lock|go\.sum|uv\.lock)$|\.(pb\.go|pb\.cc|pb\.h|map)$|_pb2(_grpc)?\.py$|\.generated\.[a-z]+$|(^|\/)(__generated__|generated)\//i;

// linguist's documentation.yml: documentation folders and the prose files every project carries.
const DOCUMENTATION =
  /(^|\/)(docs?|Documentation|examples?|samples?)\/|(^|\/)(README|CHANGELOG|CHANGES|CONTRIBUTING|COPYING|INSTALL|LICEN[CS]E|NOTICE|AUTHORS|CODE_OF_CONDUCT|SECURITY)(\.[^/]*)?$/i;

export const isVendored = (filePath: string) => VENDORED.test(filePath);
export const isDocumentation = (filePath: string) => DOCUMENTATION.test(filePath);
/**
 * Whether a file's bytes count towards `languages`, as GitHub's language bar counts them: only
 * `programming` and `markup` languages (never prose such as Markdown and Text, nor data such as JSON
 * and YAML), outside vendored, generated and documentation paths.
 */
export const countsTowardsLanguages = (filePath: string, type: string | null | undefined) =>
  (type === 'programming' || type === 'markup') &&
  !isVendored(filePath) &&
  !isGenerated(filePath) &&
  !isDocumentation(filePath);
export const isGenerated = (filePath: string) => GENERATED.test(filePath);

const TEST_PATH =
  /(^|\/)(tests?|__tests__|spec|specs|testdata|e2e)\/|\.(test|spec)\.[a-z0-9]+$|_test\.(go|py|rs|rb|exs?)$|(^|\/)test_[^/]+\.py$|Tests?\.(java|kt|cs|swift)$/i;
export const isTestPath = (filePath: string) => TEST_PATH.test(filePath);

const DOC_EXT = /\.(md|mdx|markdown|rst|adoc|asciidoc|txt|org)$/i;
export const isDocPath = (filePath: string) => DOC_EXT.test(filePath);
