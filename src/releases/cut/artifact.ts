import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { PassThrough, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ZipFile } from 'yazl';
import { listTree, readBlobs, type TreeEntry, type TreeLimits } from '../../analysis/git.js';
import { runInWorker } from '../../analysis/threads.js';
import { resolveSymlinks } from '../../scan/symlinks.js';

export interface ArtifactInput {
  /** The bare repository; only read. */
  gitDir: string;
  commit: string;
  /** The zip's top folder, with its trailing slash (`<slug>/`). */
  prefix: string;
  outFile: string;
  /** The configured tree limits (the defaults when omitted). */
  treeLimits?: TreeLimits;
}

export interface Artifact {
  sha256: string;
  sizeBytes: number;
}

/**
 * Zip (DOS) times carry no zone: local midnight of 1980-01-01, written without the extended UTC
 * field, gives the same bytes on every server whatever its time zone.
 */
const FIXED_TIME = new Date(1980, 0, 1);
const LINK_MODE = 0o120777;
/** Characters an extractor could read as structure: a backslash (a folder separator on Windows) and controls. */
const UNSAFE_IN_NAME = /[\\\p{Cc}]/gu;

/**
 * Builds the release zip of `commit` in a worker thread (reading, deflating and hashing ~200 MB
 * never runs on the HTTP event loop): every file of the tree under `prefix`, sorted, one fixed
 * timestamp, the executable bit kept, deflated; identical trees give identical bytes.
 *
 * A symlink is stored as a link only when it resolves inside the tree (`resolveSymlinks`, the
 * scan's own reading); any other is stored as a small regular file holding its target text, so
 * no entry of the zip is a link that leaves it. A name an extractor could split (`\`) or that
 * holds control characters is stored with those characters percent-encoded (`%5C`), and a `.` or
 * `..` component as `%2E`; should that collide with another name, the later entry is left out.
 * (Such releases fail the scan anyway; the zip is still safe to open.)
 */
export async function buildArtifact(
  input: ArtifactInput,
  options: { timeoutMs?: number } = {},
): Promise<Artifact> {
  try {
    return await runInWorker<Artifact>(
      new URL('./artifact-worker.js', import.meta.url),
      input,
      options.timeoutMs,
    );
  } catch (error) {
    throw new Error(`building the zip failed: ${(error as Error).message}`);
  }
}

/** The zip itself, in the calling thread: `buildArtifact` runs it in a worker. */
export async function writeArtifact(input: ArtifactInput): Promise<Artifact> {
  const entries = (await listTree(input.gitDir, input.commit, input.treeLimits)).sort((a, b) =>
    Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)),
  );
  const links = entries.filter((e) => e.mode === '120000');
  const targets = new Map<string, string>();
  await readBlobs(
    input.gitDir,
    links.map((e) => e.sha),
    (i, content) => {
      targets.set(links[i]!.path, content.toString('utf8'));
    },
  );
  const inside = resolveSymlinks(targets);

  const zip = new ZipFile();
  const failed = new Promise<never>((_, reject) => zip.once('error', reject));
  failed.catch(() => {});
  const hash = createHash('sha256');
  let sizeBytes = 0;
  const written = pipeline(
    zip.outputStream,
    new Transform({
      transform(chunk: Buffer, _encoding, done) {
        hash.update(chunk);
        sizeBytes += chunk.length;
        done(null, chunk);
      },
    }),
    createWriteStream(input.outFile),
  );

  // yazl asks for each file's bytes in entry order, once the entry before it is written; the
  // blobs stream from git in the same order, so memory holds about one file at a time.
  type Supply = (error: null, stream: NodeJS.ReadableStream) => void;
  const files: TreeEntry[] = [];
  const turns: Array<{ promise: Promise<Supply>; resolve: (supply: Supply) => void }> = [];
  const names = new Set<string>();
  for (const entry of entries) {
    const name = input.prefix + entryName(entry.path);
    if (names.has(name)) continue;
    names.add(name);
    const common = { mtime: FIXED_TIME, forceDosTimestamp: true };
    if (entry.mode === '120000') {
      const target = Buffer.from(targets.get(entry.path)!);
      const mode = inside.get(entry.path)!.inside ? LINK_MODE : 0o100644;
      zip.addBuffer(target, name, { ...common, mode, compress: false });
      continue;
    }
    let resolve!: (supply: Supply) => void;
    const turn = { promise: new Promise<Supply>((r) => (resolve = r)), resolve };
    files.push(entry);
    turns.push(turn);
    zip.addReadStreamLazy(
      name,
      { ...common, mode: entry.mode === '100755' ? 0o100755 : 0o100644, size: entry.size },
      (supply) => turn.resolve(supply),
    );
  }
  zip.end();
  await Promise.race([
    readBlobs(
      input.gitDir,
      files.map((f) => f.sha),
      async (i, content) => {
        const supply = await Promise.race([turns[i]!.promise, failed]);
        supply(null, new PassThrough().end(content));
      },
    ),
    failed,
  ]);
  await Promise.race([written, failed]);
  return { sha256: hash.digest('hex'), sizeBytes };
}

function entryName(path: string): string {
  return path
    .replace(UNSAFE_IN_NAME, (ch) => encodeURIComponent(ch))
    .split('/')
    .map((part) => (part === '.' || part === '..' ? part.replaceAll('.', '%2E') : part))
    .join('/');
}
