import type { Finding } from './types.js';

/**
 * Characters that render as nothing (or reorder what is shown) and so can carry instructions a
 * reviewer never sees: Unicode tags, bidi controls, zero-width characters, variation selectors.
 * `\p{Cf}` misses several of these in Node 20, so the ranges are explicit.
 */
// A string, not a literal: the class deliberately lists combining code points (variation selectors).
// biome-ignore lint/complexity/useRegexLiterals: a literal trips noMisleadingCharacterClass
const SUSPECT = new RegExp(
  '[\\u061C\\u180E\\u200B-\\u200F\\u202A-\\u202E\\u2060-\\u2064\\u2066-\\u2069\\uFE00-\\uFE0F\\uFEFF]|\\uDB40[\\uDC00-\\uDC7F\\uDD00-\\uDDEF]',
);

const isTag = (cp: number) => cp >= 0xe0000 && cp <= 0xe007f;
const isBidiControl = (cp: number) => (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
const isBidiMark = (cp: number) => cp === 0x200e || cp === 0x200f || cp === 0x061c;
const isZeroWidth = (cp: number) =>
  cp === 0x200b ||
  cp === 0x200c ||
  cp === 0x200d ||
  (cp >= 0x2060 && cp <= 0x2064) ||
  cp === 0xfeff ||
  cp === 0x180e;
const isVariationSelector = (cp: number) =>
  (cp >= 0xfe00 && cp <= 0xfe0f) || (cp >= 0xe0100 && cp <= 0xe01ef);
/** Every code point this module looks for: a path or name holding one is shown escaped. */
export const isHiddenCodePoint = (cp: number) =>
  isTag(cp) || isBidiControl(cp) || isBidiMark(cp) || isZeroWidth(cp) || isVariationSelector(cp);
const isPictographic = (ch: string | undefined) =>
  ch !== undefined && /\p{Extended_Pictographic}|\p{Emoji_Modifier}/u.test(ch);
const RTL_LETTER = /[\u0590-\u08FF\uFB1D-\uFDFF\uFE70-\uFEFF]/;

/** Decodes a run of tag characters to the ASCII they mirror (the smuggled text), printable only. */
function decodeTags(run: number[]): string {
  return run
    .map((cp) => cp - 0xe0000)
    .filter((c) => c >= 0x20 && c < 0x7f)
    .map((c) => String.fromCharCode(c))
    .join('')
    .slice(0, 160);
}

/**
 * Findings for one text file. Blocking: tag-character text, bidi embedding/override/isolate
 * controls, runs of two or more zero-width characters or variation selectors, and bidi marks in a
 * file with no right-to-left script. Allowed in context: a BOM at the start, ZWJ between emoji,
 * one variation selector after a visible character, emoji tag sequences (subdivision flags).
 * A lone zero-width character elsewhere is a `review` finding.
 */
export function scanHiddenUnicode(filePath: string, text: string): Finding[] {
  if (!SUSPECT.test(text)) return [];
  const chars = Array.from(text);
  const findings: Finding[] = [];
  const reported = new Set<string>();
  const hasRtl = RTL_LETTER.test(text);
  let line = 1;
  const report = (
    rule: string,
    severity: Finding['severity'],
    tier: Finding['tier'],
    description: string,
    at: number,
  ) => {
    const key = `${rule}:${at}`;
    if (reported.has(key)) return;
    reported.add(key);
    findings.push({
      kind: 'hidden_unicode',
      check: 'injection',
      tier,
      rule_id: rule,
      severity,
      description,
      path: filePath,
      line: at,
    });
  };
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i]!;
    if (ch === '\n') {
      line++;
      continue;
    }
    const cp = ch.codePointAt(0)!;
    if (isTag(cp)) {
      const run: number[] = [];
      let j = i;
      while (j < chars.length && isTag(chars[j]!.codePointAt(0)!)) run.push(chars[j++]!.codePointAt(0)!);
      const emojiFlag =
        chars[i - 1] === '\u{1F3F4}' &&
        run.at(-1) === 0xe007f &&
        run.slice(0, -1).every((c) => /[a-z0-9]/.test(String.fromCharCode(c - 0xe0000)));
      if (!emojiFlag) {
        report(
          'unicode-tag-smuggling',
          'CRITICAL',
          'blocking',
          `Invisible Unicode tag characters spell hidden text: "${decodeTags(run)}"`,
          line,
        );
      }
      i = j - 1;
      continue;
    }
    if (isBidiControl(cp)) {
      report(
        'bidi-control',
        'HIGH',
        'blocking',
        'Bidirectional control character can make text read differently from how it runs (Trojan Source)',
        line,
      );
      continue;
    }
    if (isBidiMark(cp)) {
      if (!hasRtl)
        report(
          'bidi-mark',
          'HIGH',
          'blocking',
          'Bidirectional mark in a file with no right-to-left text',
          line,
        );
      continue;
    }
    if (isZeroWidth(cp)) {
      if (cp === 0xfeff && i === 0) continue;
      let j = i;
      while (j < chars.length && isZeroWidth(chars[j]!.codePointAt(0)!)) j++;
      if (j - i >= 2) {
        report(
          'zero-width-run',
          'HIGH',
          'blocking',
          `${j - i} consecutive zero-width characters can encode hidden data`,
          line,
        );
      } else if (!(cp === 0x200d && isPictographic(chars[i - 1]) && isPictographic(chars[i + 1]))) {
        // A ZWNJ or ZWJ inside words is normal in several scripts.
        const joinerInScript =
          (cp === 0x200c || cp === 0x200d) &&
          /\p{L}/u.test(chars[i - 1] ?? '') &&
          /\p{L}/u.test(chars[i + 1] ?? '');
        if (!joinerInScript)
          report('zero-width-character', 'LOW', 'review', 'Invisible zero-width character', line);
      }
      i = j - 1;
      continue;
    }
    if (isVariationSelector(cp)) {
      let j = i;
      while (j < chars.length && isVariationSelector(chars[j]!.codePointAt(0)!)) j++;
      if (j - i >= 2) {
        report(
          'variation-selector-smuggling',
          'HIGH',
          'blocking',
          `${j - i} consecutive variation selectors can encode hidden data`,
          line,
        );
      } else if (i === 0 || /\s/.test(chars[i - 1]!)) {
        report(
          'variation-selector-smuggling',
          'HIGH',
          'blocking',
          'Variation selector attached to no visible character',
          line,
        );
      }
      i = j - 1;
    }
  }
  return findings;
}

const INJECTION_PHRASES: Array<{ id: string; pattern: RegExp; description: string }> = [
  {
    id: 'ignore-previous-instructions',
    pattern:
      /\b(ignore|disregard|forget)\s+(all\s+|any\s+)?(the\s+)?(previous|prior|above|earlier|system)\s+(instructions|prompts?|rules)/i,
    description: 'Text tells the model to ignore its earlier instructions',
  },
  {
    id: 'conceal-from-user',
    pattern:
      /\b(do not|don't|never)\s+(tell|inform|mention\s+(this\s+)?to|reveal\s+(this\s+)?to|show)\s+the\s+user/i,
    description: 'Text tells the model to hide something from the user',
  },
  {
    id: 'tool-poisoning-marker',
    pattern: /<(IMPORTANT|SYSTEM|system-prompt)>/,
    description: 'Tag often used to smuggle orders into a tool description',
  },
];

/** Prompt-injection wording in text an agent reads (docs, skills, tool descriptions): flagged for review. */
export function scanInjectionPhrases(
  filePath: string,
  text: string,
  lineAt: (offset: number) => number,
): Finding[] {
  const findings: Finding[] = [];
  for (const phrase of INJECTION_PHRASES) {
    const m = phrase.pattern.exec(text);
    if (!m) continue;
    findings.push({
      kind: 'injection',
      check: 'injection',
      tier: 'review',
      rule_id: phrase.id,
      severity: 'MODERATE',
      description: phrase.description,
      path: filePath,
      line: lineAt(m.index),
    });
  }
  return findings;
}
