import type { TreeEntry } from '../analysis/git.js';
import { isHiddenCodePoint, scanHiddenUnicode } from './hidden-unicode.js';
import { type LinkVerdict, MAX_LINK_HOPS, resolveSymlinks } from './symlinks.js';
import type { Finding } from './types.js';

/** C0 controls, DEL and C1 controls. */
const CONTROL = /\p{Cc}/u;
const SHORT_ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };
const MAX_SHOWN = 300;
/** Findings per rule; past it one finding counts the rest (a tree of 19,000 links stays a readable report). */
export const MAX_FINDINGS_PER_RULE = 100;

/**
 * Text from the repository (a path, a link target) as a person may safely be shown it: backslash,
 * control characters, line and paragraph separators and every invisible or reordering character
 * of the hidden-Unicode check are written as JSON-style escapes (`\\`, `\n`, `\u202e`), so a name
 * can neither forge lines nor display differently from what it is.
 */
export function escapeDisplay(text: string): string {
  let out = '';
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (SHORT_ESCAPES[ch]) out += SHORT_ESCAPES[ch];
    else if (CONTROL.test(ch) || cp === 0x2028 || cp === 0x2029 || isHiddenCodePoint(cp)) {
      for (let i = 0; i < ch.length; i++) out += `\\u${ch.charCodeAt(i).toString(16).padStart(4, '0')}`;
    } else out += ch;
  }
  return out;
}

const shown = (text: string) => {
  const escaped = escapeDisplay(text);
  return escaped.length > MAX_SHOWN ? `${escaped.slice(0, MAX_SHOWN)}…` : escaped;
};

/**
 * Path and link rules over the whole tree. `limits` (the tree must extract safely): a backslash in
 * a name (a folder separator to Windows extractors, so `a\..\..\x` writes outside), a symlink that
 * leads outside the release or is absolute (blocking), and every symlink (disclosed). `injection`
 * (a name must read as what it is): control characters and the hidden-Unicode rules applied to
 * each name. Targets in descriptions are escaped here, paths by the report.
 */
export function checkPaths(entries: readonly TreeEntry[], links: ReadonlyMap<string, string>): Finding[] {
  const findings: Finding[] = [];
  for (const { path } of entries) {
    if (path.includes('\\'))
      findings.push({
        kind: 'path',
        check: 'limits',
        tier: 'blocking',
        rule_id: 'path-backslash',
        severity: 'HIGH',
        description:
          'File name contains a backslash: Windows extractors read it as a folder separator, so the file can land outside the release folder',
        path,
      });
    if (CONTROL.test(path))
      findings.push({
        kind: 'hidden_unicode',
        check: 'injection',
        tier: 'blocking',
        rule_id: 'path-control-character',
        severity: 'HIGH',
        description:
          'File name contains a control character (a newline, escape or other C0/C1 code): it can forge lines and terminal output wherever the name is shown',
        path,
      });
    for (const finding of scanHiddenUnicode(path, path)) {
      const { line: _line, ...rest } = finding;
      findings.push({
        ...rest,
        rule_id: `path-${finding.rule_id}`,
        description: `File name: ${finding.description}`,
      });
    }
  }
  const verdicts = resolveSymlinks(links);
  for (const [path, target] of [...links].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    findings.push({
      kind: 'path',
      check: 'limits',
      tier: 'disclosed',
      rule_id: 'symlink',
      severity: 'LOW',
      description: `Symlink to ${shown(target)}`,
      path,
    });
    const verdict = verdicts.get(path)!;
    if (!verdict.inside)
      findings.push({
        kind: 'path',
        check: 'limits',
        tier: 'blocking',
        rule_id: 'symlink-escape',
        severity: 'HIGH',
        description: escapeReason(verdict.reason, shown(target)),
        path,
      });
  }
  return capPerRule(findings);
}

function capPerRule(findings: Finding[]): Finding[] {
  const kept: Finding[] = [];
  const over = new Map<string, { first: Finding; count: number }>();
  const seen = new Map<string, number>();
  for (const finding of findings) {
    const n = (seen.get(finding.rule_id) ?? 0) + 1;
    seen.set(finding.rule_id, n);
    if (n <= MAX_FINDINGS_PER_RULE) kept.push(finding);
    else over.set(finding.rule_id, { first: finding, count: (over.get(finding.rule_id)?.count ?? 0) + 1 });
  }
  for (const { first, count } of over.values()) {
    const { path: _path, ...rest } = first;
    kept.push({ ...rest, description: `…and ${count} more findings of this rule` });
  }
  return kept;
}

function escapeReason(reason: Extract<LinkVerdict, { inside: false }>['reason'], target: string): string {
  switch (reason) {
    case 'absolute':
      return `Symlink to an absolute path (${target}): once extracted it points outside the release`;
    case 'escapes':
      return `Symlink leads outside the release (${target})`;
    case 'too-many-hops':
      return `Symlink resolves through more than ${MAX_LINK_HOPS} links (${target})`;
    case 'invalid':
      return 'Symlink with an empty, NUL-containing or over-long target';
  }
}
