import type { Engineering } from './types.js';

/** One sampled file's share of the engineering metrics: hashes of its tokens, five-grams and lines. */
export interface FileSample {
  tokenHashes: Uint32Array;
  tokensTotal: number;
  shingleHashes: Uint32Array;
  shinglesSampled: number;
  codeLineHashes: Uint32Array;
  codeLinesTotal: number;
  docLineHashes: Uint32Array;
  docLineWords: Uint32Array;
}

/** Non-blank lines of all code / doc files, and of the sampled ones: effective counts scale by their ratio. */
export interface SampledLines {
  code: { all: number; sampled: number };
  doc: { all: number; sampled: number };
}

const round = (value: number) => Math.round(value * 1000) / 1000;
/** Past the sampling budget, a sampled count stands for all files in proportion to their lines. */
const scaleUp = (count: number, sloc: { all: number; sampled: number }) =>
  sloc.sampled > 0 && sloc.all > sloc.sampled ? Math.round((count * sloc.all) / sloc.sampled) : count;

/** Merges the sampled files (in tree order) into the engineering metrics (formulas in docs/ANALYSIS.md). */
export function engineeringMetrics(
  samples: Iterable<FileSample>,
  sloc: SampledLines,
  counts: { codeFiles: number; testFiles: number },
): Engineering {
  const tokens = new Set<number>();
  const shingles = new Set<number>();
  const codeLines = new Set<number>();
  const docLines = new Map<number, number>();
  let tokensTotal = 0;
  let shinglesSampled = 0;
  let codeLinesTotal = 0;
  for (const sample of samples) {
    for (const hash of sample.tokenHashes) tokens.add(hash);
    for (const hash of sample.shingleHashes) shingles.add(hash);
    for (const hash of sample.codeLineHashes) codeLines.add(hash);
    sample.docLineHashes.forEach((hash, i) => {
      if (!docLines.has(hash)) docLines.set(hash, sample.docLineWords[i]!);
    });
    tokensTotal += sample.tokensTotal;
    shinglesSampled += sample.shinglesSampled;
    codeLinesTotal += sample.codeLinesTotal;
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
    effective_code_lines: scaleUp(codeLines.size, sloc.code),
    effective_doc_words: scaleUp(docWords, sloc.doc),
    code_files: counts.codeFiles,
    test_files: counts.testFiles,
    padding_suspected: padding,
  };
}
