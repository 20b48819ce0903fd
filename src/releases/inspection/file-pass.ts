import type { FileSample } from '../../analysis/engineering.js';
import type { TreeEntry } from '../../analysis/git.js';
import { readBlobs } from '../../analysis/git.js';
import { isKeptFile } from '../../analysis/kept-files.js';
import { detectLanguage, isDocPath, isGenerated, isTestPath, isVendored } from '../../analysis/languages.js';
import { fileCapabilities } from '../../scan/capabilities.js';
import { scanHiddenUnicode, scanInjectionPhrases } from '../../scan/hidden-unicode.js';
import { lineIndex } from '../../scan/lines.js';
import { createSecretScanner, type SecretScanner } from '../../scan/secrets.js';
import type { Finding, ScanNotes } from '../../scan/types.js';

/** Files above this are not read: they breach the per-file limit and block the release anyway. */
export const MAX_FILE_BYTES = 50 * 1024 * 1024;
/** Engineering metrics sample the first bytes of each file, and at most this much per tree. */
const ENGINEERING_FILE_SAMPLE = 64 * 1024;
const ENGINEERING_BUDGET = 8 * 1024 * 1024;
/** 1 in 8 five-grams (by hash) are kept: the unique ratio of a hash sample estimates the whole. */
const SHINGLE_SAMPLE_MASK = 7;

export interface PassFile extends TreeEntry {
  index: number;
  /** In the engineering sample (`sampleFiles`): its tokens and lines are hashed too. */
  sample: boolean;
}

/** What the tree's analysis needs of one file, from its path, mode and bytes alone. */
export interface FileFacts {
  binary: boolean;
  lines: number;
  /** Non-blank lines. */
  sloc: number;
  language: string | null;
  languageType: string | null;
  /** A test file by path that contains a test construct. */
  test: boolean;
  /** Code that constructs an MCP server. */
  mcpServer: boolean;
  /** Starts with `#!`. */
  shebang: boolean;
}

/**
 * Everything the pass computes for one file: a function of its path, mode and content only, so a
 * later release of the listing reuses it for the same blob at the same path (`file-results.ts`).
 */
export interface FileResult {
  facts: FileFacts;
  /** A symlink's target text (the path checks resolve them over the whole tree). */
  link?: string;
  /** Read as text and scanned (not binary, not a symlink). */
  scanned: boolean;
  bytes: number;
  findings: Finding[];
  /** The documented examples and placeholders the secret check allowed here. */
  notes: ScanNotes;
  hosts: Array<{ host: string; from: 'code' | 'docs' }>;
  env: string[];
  tools: string[];
  /** Whose non-blank lines these are for the engineering scale-up. */
  slocKind: 'code' | 'doc' | null;
  /** Present when the file was in the sample when this result was computed. */
  sample?: FileSample;
}

export interface PassResult {
  /** Per file read, with the file's `index`. */
  results: Array<{ index: number; result: FileResult }>;
  /** The whole text of the files the analysis parses afterwards (`isKeptFile`). */
  kept: Array<{ path: string; text: string }>;
}

const TEST_CONSTRUCT =
  /\b(describe|it|test)\s*\(|\bdef test_|\bfunc Test[A-Z_]|#\[test\]|#\[cfg\(test\)\]|\bassert(Equal|That)?\b|\bexpect\(/;
const MCP_SERVER =
  /(?:from|import|require\()\s*['"]@modelcontextprotocol\/sdk\/server|^\s*(?:from|import)\s+(?:mcp\.server|fastmcp)\b|"github\.com\/mark3labs\/mcp-go\/server"|^\s*use\s+rmcp::/m;
const COMMENT_LINE = /^(\/\/|#(?!!)|\/\*|\*|--|;|<!--|%)/;
const PUNCTUATION_ONLY = /^[\s{}()[\];,.:<>/*\\-]*$/;
const WORD = /[A-Za-z_][A-Za-z0-9_]*/g;

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** git's own rule: a NUL byte in the first 8,000 bytes. */
const isBinary = (content: Buffer) => content.subarray(0, 8000).includes(0);

/**
 * The one read of the files it is given: each blob streams from git once and feeds every per-file
 * analysis and check (language, lines, secrets, hidden Unicode, injection wording, capabilities,
 * engineering samples). Runs inside a worker thread; also callable in-process. Files past
 * `MAX_FILE_BYTES` are never given to it.
 */
export async function runFilePass(
  repoPath: string,
  files: PassFile[],
  scanner: SecretScanner = createSecretScanner(),
): Promise<PassResult> {
  const results: PassResult['results'] = [];
  const kept: PassResult['kept'] = [];
  await readBlobs(
    repoPath,
    files.map((f) => f.sha),
    (i, content) => {
      const file = files[i]!;
      const { result, text } = analyseFile(file, content, scanner);
      results.push({ index: file.index, result });
      if (text !== undefined && isKeptFile(file.path, content.length)) kept.push({ path: file.path, text });
    },
  );
  return { results, kept };
}

/** A file whose content says nothing: a binary or a symlink. */
function opaque(binary: boolean): FileFacts {
  return {
    binary,
    lines: 0,
    sloc: 0,
    language: null,
    languageType: null,
    test: false,
    mcpServer: false,
    shebang: false,
  };
}

const NO_NOTES = (): ScanNotes => ({ notes: [], omitted: 0 });

/** A file too large to read: binary unless a symlink; it breaches the per-file limit anyway. */
export function unreadFile(mode: string): FileResult {
  const binary = mode !== '120000';
  return {
    facts: opaque(binary),
    scanned: false,
    bytes: 0,
    findings: [],
    notes: NO_NOTES(),
    hosts: [],
    env: [],
    tools: [],
    slocKind: null,
  };
}

/** Every per-file analysis and check of one file; `text` is its content when read as text. */
function analyseFile(
  file: PassFile,
  content: Buffer,
  scanner: SecretScanner,
): { result: FileResult; text?: string } {
  const base = { ...unreadFile(file.mode), bytes: content.length };
  // A symlink's blob is its target: a path, not content to analyse.
  if (file.mode === '120000') return { result: { ...base, link: content.toString('utf8') } };
  if (isBinary(content)) return { result: base };

  const text = content.toString('utf8');
  const firstLineEnd = text.indexOf('\n');
  const firstLine = firstLineEnd < 0 ? text : text.slice(0, firstLineEnd);
  const language = detectLanguage(file.path, firstLine);
  const lineAt = lineIndex(text);
  const vendored = isVendored(file.path) || isGenerated(file.path);
  const notes = NO_NOTES();

  const findings = [...scanner.scan(file.path, text, lineAt, notes), ...scanHiddenUnicode(file.path, text)];
  const doc = isDocPath(file.path) || language?.type === 'prose';
  const code = language?.type === 'programming';
  if (doc || /\.(json|ya?ml|toml)$/i.test(file.path))
    findings.push(...scanInjectionPhrases(file.path, text, lineAt));

  let hosts: FileResult['hosts'] = [];
  let env: string[] = [];
  let tools: string[] = [];
  if (!vendored && (code || doc)) {
    const shell = language?.name === 'Shell' || language?.name === 'PowerShell';
    const caps = fileCapabilities(text, doc ? 'docs' : shell ? 'shell' : 'code');
    hosts = caps.hosts.map((host) => ({ host, from: doc ? ('docs' as const) : ('code' as const) }));
    env = [...caps.env];
    tools = [...caps.tools];
  }

  const sampled = file.sample && !vendored && (code || doc);
  const codeLines = new Set<number>();
  let codeLinesTotal = 0;
  const docLines = new Map<number, number>();
  let lines = 0;
  let sloc = 0;
  for (const raw of text.split('\n')) {
    lines++;
    const line = raw.trim();
    if (line.length === 0) continue;
    sloc++;
    if (!sampled) continue;
    if (code && !COMMENT_LINE.test(line) && !PUNCTUATION_ONLY.test(line)) {
      codeLinesTotal++;
      codeLines.add(fnv1a(line));
    } else if (doc) {
      const words = line.split(/\s+/).length;
      docLines.set(fnv1a(line), words);
    }
  }
  if (text.endsWith('\n')) lines--;

  let sample: FileSample | undefined;
  if (sampled) {
    const slice = text.length > ENGINEERING_FILE_SAMPLE ? text.slice(0, ENGINEERING_FILE_SAMPLE) : text;
    const tokenHashOf = new Map<string, number>();
    const shingles = new Set<number>();
    let tokensTotal = 0;
    let shinglesSampled = 0;
    const window: number[] = [];
    for (const m of slice.matchAll(WORD)) {
      const token = m[0].toLowerCase();
      let hash = tokenHashOf.get(token);
      if (hash === undefined) {
        hash = fnv1a(token);
        tokenHashOf.set(token, hash);
      }
      tokensTotal++;
      window.push(hash);
      if (window.length > 5) window.shift();
      if (window.length === 5) {
        let h = 0x811c9dc5;
        for (const t of window) h = Math.imul(h ^ t, 0x01000193);
        h >>>= 0;
        if ((h & SHINGLE_SAMPLE_MASK) === 0) {
          shinglesSampled++;
          shingles.add(h);
        }
      }
    }
    const docHashes = [...docLines.keys()];
    sample = {
      tokenHashes: Uint32Array.from(tokenHashOf.values()),
      tokensTotal,
      shingleHashes: Uint32Array.from(shingles),
      shinglesSampled,
      codeLineHashes: Uint32Array.from(codeLines),
      codeLinesTotal,
      docLineHashes: Uint32Array.from(docHashes),
      docLineWords: Uint32Array.from(docHashes.map((h) => docLines.get(h)!)),
    };
  }

  const result: FileResult = {
    facts: {
      binary: false,
      lines,
      sloc,
      language: language?.name ?? null,
      languageType: language?.type ?? null,
      test: isTestPath(file.path) && TEST_CONSTRUCT.test(text),
      mcpServer:
        code && (text.includes('modelcontextprotocol') || text.includes('mcp')) && MCP_SERVER.test(text),
      shebang: firstLine.startsWith('#!'),
    },
    scanned: true,
    bytes: content.length,
    findings,
    notes,
    hosts,
    env,
    tools,
    slocKind: vendored ? null : code ? 'code' : doc ? 'doc' : null,
    ...(sample ? { sample } : {}),
  };
  return { result, text };
}

/**
 * The files whose first `ENGINEERING_FILE_SAMPLE` bytes feed the engineering metrics: code and
 * document files by path, outside vendored and generated ones, in tree order until
 * `ENGINEERING_BUDGET`. Chosen from the listing alone, so the sample is the same whoever reads
 * the files, in how many workers, and whether their results were computed now or kept.
 */
export function sampleFiles(entries: ReadonlyArray<{ path: string; size: number; mode: string }>): boolean[] {
  let budget = ENGINEERING_BUDGET;
  return entries.map((entry) => {
    if (budget <= 0 || entry.mode === '120000' || entry.size > MAX_FILE_BYTES) return false;
    if (isVendored(entry.path) || isGenerated(entry.path)) return false;
    const type = detectLanguage(entry.path)?.type;
    if (!isDocPath(entry.path) && type !== 'programming' && type !== 'prose') return false;
    budget -= Math.min(entry.size, ENGINEERING_FILE_SAMPLE);
    return true;
  });
}
