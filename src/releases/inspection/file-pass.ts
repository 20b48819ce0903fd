import type { EngineeringSample } from '../../analysis/engineering.js';
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
/** Engineering metrics sample the first bytes of each file, and at most this much per pass. */
const ENGINEERING_FILE_SAMPLE = 64 * 1024;
const ENGINEERING_PASS_BUDGET = 8 * 1024 * 1024;
/** 1 in 8 five-grams (by hash) are kept: the unique ratio of a hash sample estimates the whole. */
const SHINGLE_SAMPLE_MASK = 7;

export interface PassFile extends TreeEntry {
  index: number;
}

export interface FileFacts {
  index: number;
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

export interface PassResult extends EngineeringSample {
  facts: FileFacts[];
  findings: Finding[];
  /** The documented examples and placeholders the secret check allowed. */
  notes: ScanNotes;
  /** Every symlink read, with its target text (the path checks resolve them over the whole tree). */
  links: Array<{ path: string; target: string }>;
  kept: Array<{ path: string; text: string }>;
  hosts: Array<{ host: string; from: 'code' | 'docs'; path: string }>;
  env: Array<{ name: string; path: string }>;
  tools: Array<{ name: string; path: string }>;
  filesScanned: number;
  binarySkipped: number;
  bytesRead: number;
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
 * The one read of every file: each blob streams from git once and feeds every per-file analysis
 * and check (language, lines, secrets, hidden Unicode, injection wording, capabilities, engineering
 * samples). Runs inside a worker thread; also callable in-process.
 */
export async function runFilePass(
  repoPath: string,
  files: PassFile[],
  scanner: SecretScanner = createSecretScanner(),
): Promise<PassResult> {
  const facts: FileFacts[] = [];
  const findings: Finding[] = [];
  const notes: ScanNotes = { notes: [], omitted: 0 };
  const kept: PassResult['kept'] = [];
  const links: PassResult['links'] = [];
  const hosts: PassResult['hosts'] = [];
  const env: PassResult['env'] = [];
  const tools: PassResult['tools'] = [];
  const tokenHashOf = new Map<string, number>();
  let tokensTotal = 0;
  const shingles = new Set<number>();
  let shinglesSampled = 0;
  const codeLines = new Set<number>();
  let codeLinesTotal = 0;
  const docLines = new Map<number, number>();
  let engineeringBytes = 0;
  const codeSloc = { all: 0, sampled: 0 };
  const docSloc = { all: 0, sampled: 0 };
  let filesScanned = 0;
  let binarySkipped = 0;
  let bytesRead = 0;

  const opaque = (index: number, binary: boolean): FileFacts => ({
    index,
    binary,
    lines: 0,
    sloc: 0,
    language: null,
    languageType: null,
    test: false,
    mcpServer: false,
    shebang: false,
  });
  const readable: PassFile[] = [];
  for (const f of files) {
    if (f.size <= MAX_FILE_BYTES) readable.push(f);
    else facts.push(opaque(f.index, f.mode !== '120000'));
  }

  await readBlobs(
    repoPath,
    readable.map((f) => f.sha),
    (i, content) => {
      const file = readable[i]!;
      bytesRead += content.length;
      // A symlink's blob is its target: a path, not content to analyse.
      if (file.mode === '120000') {
        links.push({ path: file.path, target: content.toString('utf8') });
        facts.push(opaque(file.index, false));
        return;
      }
      if (isBinary(content)) {
        binarySkipped++;
        facts.push(opaque(file.index, true));
        return;
      }
      filesScanned++;
      const text = content.toString('utf8');
      const firstLineEnd = text.indexOf('\n');
      const firstLine = firstLineEnd < 0 ? text : text.slice(0, firstLineEnd);
      const language = detectLanguage(file.path, firstLine);
      const lineAt = lineIndex(text);
      const vendored = isVendored(file.path) || isGenerated(file.path);

      findings.push(...scanner.scan(file.path, text, lineAt, notes));
      findings.push(...scanHiddenUnicode(file.path, text));
      const doc = isDocPath(file.path) || language?.type === 'prose';
      const code = language?.type === 'programming';
      if (doc || /\.(json|ya?ml|toml)$/i.test(file.path))
        findings.push(...scanInjectionPhrases(file.path, text, lineAt));

      if (!vendored && (code || doc)) {
        const shell = language?.name === 'Shell' || language?.name === 'PowerShell';
        const caps = fileCapabilities(text, doc ? 'docs' : shell ? 'shell' : 'code');
        for (const host of caps.hosts) hosts.push({ host, from: doc ? 'docs' : 'code', path: file.path });
        for (const name of caps.env) env.push({ name, path: file.path });
        for (const name of caps.tools) tools.push({ name, path: file.path });
      }

      let lines = 0;
      let sloc = 0;
      const sample = !vendored && (code || doc) && engineeringBytes < ENGINEERING_PASS_BUDGET;
      const window: number[] = [];
      for (const raw of text.split('\n')) {
        lines++;
        const line = raw.trim();
        if (line.length === 0) continue;
        sloc++;
        if (!sample) continue;
        if (code && !COMMENT_LINE.test(line) && !PUNCTUATION_ONLY.test(line)) {
          codeLinesTotal++;
          codeLines.add(fnv1a(line));
        } else if (doc) {
          const words = line.split(/\s+/).length;
          docLines.set(fnv1a(line), words);
        }
      }
      if (text.endsWith('\n')) lines--;
      const slocBucket = vendored ? undefined : code ? codeSloc : doc ? docSloc : undefined;
      if (slocBucket) {
        slocBucket.all += sloc;
        if (sample) slocBucket.sampled += sloc;
      }
      if (sample) {
        const slice = text.length > ENGINEERING_FILE_SAMPLE ? text.slice(0, ENGINEERING_FILE_SAMPLE) : text;
        engineeringBytes += slice.length;
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
      }
      facts.push({
        index: file.index,
        binary: false,
        lines,
        sloc,
        language: language?.name ?? null,
        languageType: language?.type ?? null,
        test: isTestPath(file.path) && TEST_CONSTRUCT.test(text),
        mcpServer:
          code && (text.includes('modelcontextprotocol') || text.includes('mcp')) && MCP_SERVER.test(text),
        shebang: firstLine.startsWith('#!'),
      });
      if (isKeptFile(file.path, content.length)) kept.push({ path: file.path, text });
    },
  );

  const docHashes = [...docLines.keys()];
  return {
    facts,
    findings,
    notes,
    links,
    kept,
    hosts,
    env,
    tools,
    tokenHashes: Uint32Array.from(tokenHashOf.values()),
    tokensTotal,
    shingleHashes: Uint32Array.from(shingles),
    shinglesSampled,
    codeLineHashes: Uint32Array.from(codeLines),
    codeLinesTotal,
    codeSloc,
    docSloc,
    docLineHashes: Uint32Array.from(docHashes),
    docLineWords: Uint32Array.from(docHashes.map((h) => docLines.get(h)!)),
    filesScanned,
    binarySkipped,
    bytesRead,
  };
}
