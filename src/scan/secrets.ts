import { isGenerated } from '../analysis/languages.js';
import { KeywordMatcher } from './keywords.js';
import { SECRET_RULES, type SecretRule } from './secret-rules.js';
import { type Finding, MAX_SCAN_NOTES, type ScanNote, type ScanNotes } from './types.js';

interface CompiledRule extends SecretRule {
  regex: RegExp;
  pathRegex?: RegExp;
}

export interface SecretScanner {
  /** The secrets in `text`; the documented examples and placeholders it allowed go into `notes`, when given. */
  scan(filePath: string, text: string, lineAt: (offset: number) => number, notes?: ScanNotes): Finding[];
}

/**
 * Values that are documentation, not secrets: examples, placeholders, references to the environment.
 * They excuse a value only when its structure does not prove it real (`SecretRule.proof`).
 * Placeholder words count as people write them, in one case (`your`, `YOUR`, `Your`): a token's
 * random part spells `yOuR` or `dUmMy` far more often than it spells one of those.
 */
const PLACEHOLDER_WORDS = ['example', 'placeholder', 'your', 'xxxx', 'changeme', 'dummy', 'redacted'];
const PLACEHOLDER_WORD = new RegExp(
  PLACEHOLDER_WORDS.flatMap((w) => [w, w.toUpperCase(), w[0]!.toUpperCase() + w.slice(1)]).join('|'),
);
const PLACEHOLDER_MARK = /\*\*\*\*|<[^>]*>|0123456789|abcdef(?:gh)?ijklmn/i;
/** A reference to where the real value lives: not a credential at all, so not worth a note either. */
const ENVIRONMENT_REFERENCE = /\$\{|\{\{|%\(|process\.env|os\.environ|getenv|env\(|secrets\.|%[A-Za-z_]+%/i;
/** Passwords of local development databases (docker-compose defaults), not credentials. */
const DEV_PASSWORD =
  /^(postgres|password|passwd|pass|secret|root|admin|test|mysql|redis|guest|user|dev|local)$/i;
/** Paths where generic rules would mostly hit deliberate test data. */
const FIXTURE_PATH =
  /(^|\/)(tests?|__tests__|spec|specs|fixtures?|__fixtures__|testdata|examples?|samples?|mocks?|__mocks__)\/|\.(example|sample|template|dist)$|(^|\/)\.env\.(example|sample|template)$/i;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function shannonEntropy(value: string): number {
  const counts = new Map<string, number>();
  for (const ch of value) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let entropy = 0;
  for (const count of counts.values()) {
    const p = count / value.length;
    entropy -= p * Math.log2(p);
  }
  return entropy;
}

/** What the report may show of a secret: its first four characters and its length. */
export function redact(value: string): string {
  return `${value.slice(0, 4)}…(${value.length} chars)`;
}

export function createSecretScanner(rules: SecretRule[] = SECRET_RULES): SecretScanner {
  const compiled: CompiledRule[] = rules.map((rule) => ({
    ...rule,
    regex: new RegExp(rule.pattern, `g${rule.flags ?? ''}`),
    pathRegex: rule.path ? new RegExp(rule.path, 'i') : undefined,
  }));
  const small = compiled.filter((r) => r.alwaysBelow !== undefined);
  const byKeyword = new Map<string, CompiledRule[]>();
  for (const rule of compiled) {
    for (const keyword of rule.keywords.map((k) => k.toLowerCase())) {
      const list = byKeyword.get(keyword) ?? [];
      if (!list.includes(rule)) list.push(rule);
      byKeyword.set(keyword, list);
    }
  }
  const prefilter = new KeywordMatcher(byKeyword.keys());

  return {
    scan(filePath, text, lineAt, notes) {
      const candidates = new Set<CompiledRule>();
      for (const keyword of prefilter.find(text))
        for (const rule of byKeyword.get(keyword) ?? []) candidates.add(rule);
      for (const rule of small) if (text.length <= rule.alwaysBelow!) candidates.add(rule);
      if (candidates.size === 0) return [];
      const fixture = FIXTURE_PATH.test(filePath);
      const lockfile = isGenerated(filePath);
      const findings: Finding[] = [];
      const seen = new Set<string>();
      // Specific rules first; a generic rule never reports a value a specific rule already named.
      const spans: Array<[number, number]> = [];
      const noted: Array<[number, number]> = [];
      for (const rule of [...candidates].sort(
        (a, b) => Number(a.generic ?? false) - Number(b.generic ?? false),
      )) {
        if (rule.generic && fixture) continue;
        if (rule.assignment && lockfile) continue;
        if (rule.pathRegex && !rule.pathRegex.test(filePath)) continue;
        rule.regex.lastIndex = 0;
        for (let m = rule.regex.exec(text); m; m = rule.regex.exec(text)) {
          if (m[0].length === 0) rule.regex.lastIndex++;
          const matched = m.groups?.secret ?? m.groups?.secret2 ?? m[0];
          const judged = judge(rule, matched);
          if (judged === 'nothing' || (judged !== 'secret' && !notes)) continue;
          const secret = rule.confirm ? rule.confirm(matched, text) : matched;
          if (secret === undefined) continue;
          const start = m.index + Math.max(0, m[0].indexOf(secret));
          const end = start + secret.length;
          const overlaps = ([s, e]: [number, number]) => start < e && s < end;
          if (rule.generic && spans.some(overlaps)) continue;
          const line = lineAt(start);
          if (judged !== 'secret') {
            // Kept apart from `spans`: an allowed value never hides a generic rule's finding.
            if (rule.generic && noted.some(overlaps)) continue;
            noted.push([start, end]);
            const key = `note:${rule.id}:${line}`;
            if (seen.has(key)) continue;
            seen.add(key);
            addNote(notes!, {
              kind: 'allowed_example',
              check: 'secrets',
              rule_id: rule.id,
              description: rule.description,
              reason: judged.sign,
              path: filePath,
              line,
              hint: redact(secret.trim()),
            });
            continue;
          }
          spans.push([start, end]);
          const key = `${rule.id}:${line}`;
          if (seen.has(key)) continue;
          seen.add(key);
          findings.push({
            kind: 'secret',
            check: 'secrets',
            tier: 'blocking',
            rule_id: rule.id,
            severity: rule.severity,
            description: `${rule.description} committed in the repository`,
            path: filePath,
            line,
            hint: redact(secret.trim()),
          });
        }
      }
      return findings;
    },
  };
}

/** Whether a value reads as a placeholder (`EXAMPLE`, `your_…`, `xxxx`, `${VAR}`, …). */
export function looksLikePlaceholder(value: string): boolean {
  return placeholderSign(value) !== undefined || (value.length < 200 && ENVIRONMENT_REFERENCE.test(value));
}

/** What makes a value read as a documented example or placeholder, as a note may quote it (never the value). */
function placeholderSign(value: string): string | undefined {
  if (value.length >= 200) return undefined;
  const word = PLACEHOLDER_WORD.exec(value)?.[0];
  if (word) return `it contains “${word}”`;
  const mark = PLACEHOLDER_MARK.exec(value)?.[0];
  if (!mark) return undefined;
  return mark.startsWith('<') ? 'it holds a “<…>” placeholder' : `it contains “${mark}”`;
}

function addNote(into: ScanNotes, note: ScanNote): void {
  if (into.notes.length < MAX_SCAN_NOTES) into.notes.push(note);
  else into.omitted++;
}

/**
 * What a match is: a secret (a finding), a documented example or placeholder that would otherwise
 * be one (allowed, and noted with what gave it away), or nothing a rule would block.
 */
function judge(rule: SecretRule, secret: string): 'secret' | 'nothing' | { sign: string } {
  const sign = placeholderSign(secret);
  const reference = secret.length < 200 && ENVIRONMENT_REFERENCE.test(secret);
  // A placeholder word in a value whose structure proves it real is chance, not documentation:
  // `example` is a BIP-39 word, and a token's random part can spell `your`.
  if ((sign !== undefined || reference) && rule.proof?.(secret))
    return hasSecretShape(rule, secret) ? 'secret' : 'nothing';
  if (reference || !hasSecretShape(rule, secret)) return 'nothing';
  return sign === undefined ? 'secret' : { sign };
}

/** The rule's own floors (entropy, repetition, UUIDs, development passwords), placeholders aside. */
function hasSecretShape(rule: SecretRule, secret: string): boolean {
  if (/^(.)\1+$/.test(secret.replace(/[\s-]/g, ''))) return false;
  if (rule.id === 'database-url-password' && (DEV_PASSWORD.test(secret) || secret.startsWith('$')))
    return false;
  if (rule.entropy !== undefined && shannonEntropy(secret) < rule.entropy) return false;
  // UUIDs name things (requests, records, tenants); a provider rule that expects one says so.
  if (rule.generic && UUID.test(secret)) return false;
  // A generic assignment is a secret only when it mixes letters and digits, as generated keys do.
  if (rule.id === 'generic-secret-assignment' && !(/[0-9]/.test(secret) && /[A-Za-z]/.test(secret)))
    return false;
  return true;
}
