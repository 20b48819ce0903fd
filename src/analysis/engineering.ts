import type { Engineering } from './types.js';

/** What one file pass samples for the engineering metrics (hashes of tokens, five-grams and lines). */
export interface EngineeringSample {
  tokenHashes: Uint32Array;
  tokensTotal: number;
  shingleHashes: Uint32Array;
  shinglesSampled: number;
  codeLineHashes: Uint32Array;
  codeLinesTotal: number;
  /** Non-blank lines of all code / doc files, and of the sampled ones: effective counts scale by their ratio. */
  codeSloc: { all: number; sampled: number };
  docSloc: { all: number; sampled: number };
  docLineHashes: Uint32Array;
  docLineWords: Uint32Array;
}

const round = (value: number) => Math.round(value * 1000) / 1000;
/** Past the sampling budget, a sampled count stands for all files in proportion to their lines. */
const scaleUp = (count: number, sloc: { all: number; sampled: number }) =>
  sloc.sampled > 0 && sloc.all > sloc.sampled ? Math.round((count * sloc.all) / sloc.sampled) : count;

/** Merges the per-worker samples into the engineering metrics (formulas in docs/ANALYSIS.md). */
export function engineeringMetrics(
  passes: EngineeringSample[],
  counts: { codeFiles: number; testFiles: number },
): Engineering {
  const tokens = new Set<number>();
  const shingles = new Set<number>();
  const codeLines = new Set<number>();
  const docLines = new Map<number, number>();
  let tokensTotal = 0;
  let shinglesSampled = 0;
  let codeLinesTotal = 0;
  const codeSloc = { all: 0, sampled: 0 };
  const docSloc = { all: 0, sampled: 0 };
  for (const pass of passes) {
    for (const hash of pass.tokenHashes) tokens.add(hash);
    for (const hash of pass.shingleHashes) shingles.add(hash);
    for (const hash of pass.codeLineHashes) codeLines.add(hash);
    pass.docLineHashes.forEach((hash, i) => {
      if (!docLines.has(hash)) docLines.set(hash, pass.docLineWords[i]!);
    });
    tokensTotal += pass.tokensTotal;
    shinglesSampled += pass.shinglesSampled;
    codeLinesTotal += pass.codeLinesTotal;
    codeSloc.all += pass.codeSloc.all;
    codeSloc.sampled += pass.codeSloc.sampled;
    docSloc.all += pass.docSloc.all;
    docSloc.sampled += pass.docSloc.sampled;
  }
  const unique5 = shinglesSampled > 0 ? shingles.size / shinglesSampled : 1;
  let docWords = 0;
  for (const words of docLines.values()) docWords += words;
  const padding =
    (shinglesSampled >= 500 && unique5 < 0.35) ||
    (codeLinesTotal >= 1000 && codeLines.size / codeLinesTotal < 0.4);
  return {
    unique_5gram_ratio: round(unique5),
    type_token_ratio: tokensTotal > 0 ? round(tokens.size / tokensTotal) : 0,
    effective_code_lines: scaleUp(codeLines.size, codeSloc),
    effective_doc_words: scaleUp(docWords, docSloc),
    code_files: counts.codeFiles,
    test_files: counts.testFiles,
    padding_suspected: padding,
  };
}
