import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import yauzl from 'yauzl';
import { listTree, readBlobs, type TreeLimits } from '../../analysis/git.js';
import { DEFLATER_RECORD, deflatedEntry } from './deflater.js';
import { zipEntries } from './zip-names.js';
import { DEFLATED, type ZipEntryData } from './zip-writer.js';

/** An earlier release's zip, on local disk, and the commit it was built from. */
export interface EarlierZip {
  commit: string;
  zipFile: string;
}

/** The deflated entries of an earlier zip, found by the git blob they hold. */
export interface ReusableEntries {
  has(sha: string): boolean;
  /** The deflated entry of blob `sha` under `name` and `mode`, or undefined when the earlier zip holds no such blob. */
  take(sha: string, name: string, mode: number): ZipEntryData | undefined;
  close(): void;
}

/** The earlier zip cannot give entries this zip may hold: the zip is then deflated afresh. */
export class NotReusable extends Error {
  constructor(reason: string) {
    super(`earlier zip not reused: ${reason}`);
    this.name = 'NotReusable';
  }
}

/** Entries re-deflated and compared with the earlier zip's before any is reused. */
const SAMPLES = 4;
const LOCAL_HEADER_SIGNATURE = 0x04034b50;
const LOCAL_HEADER_BYTES = 30;
/** The earlier zip is read in spans of this size: its entries come in the order they are taken. */
const SPAN_BYTES = 4 << 20;
/** Only entries up to this size are sampled: the check costs milliseconds, not a binary's deflate. */
const SAMPLE_MAX_BYTES = 64 * 1024;

/**
 * Opens `earlier` for reuse by a zip of another commit of the same repository. Throws
 * `NotReusable` (or the error that stopped it) unless every check passes: the zip's comment names
 * the deflater running now (zlib version and level, `DEFLATER_RECORD`), its entries are exactly
 * the earlier commit's files under the same `prefix`, with their sizes, and a few of its entries
 * deflated afresh give the very bytes it holds. The caller then copies the compressed bytes of
 * every blob both trees share (a renamed or re-moded file included) instead of deflating them;
 * the blob's content is never read, so the zip is as a fresh build would write it only because
 * the earlier zip is the earlier commit's (the caller pairs them from one release).
 */
export async function openReusableEntries(
  earlier: EarlierZip,
  tree: { gitDir: string; prefix: string; treeLimits?: TreeLimits },
): Promise<ReusableEntries> {
  const fd = openSync(earlier.zipFile, 'r');
  try {
    const zip = await yauzl.fromRandomAccessReaderPromise(new FileReader(fd), fstatSync(fd).size, {
      autoClose: false,
      validateEntrySizes: true,
    });
    if (zip.comment !== DEFLATER_RECORD)
      throw new NotReusable(`made by another deflater (${JSON.stringify(zip.comment.slice(0, 100))})`);
    const held = new Map<string, yauzl.Entry>();
    for await (const entry of zip.eachEntry()) held.set(entry.fileName, entry);
    const files = zipEntries(await listTree(tree.gitDir, earlier.commit, tree.treeLimits), tree.prefix);
    if (files.length !== held.size) throw new NotReusable('its entries are not the earlier commit’s files');
    const bySha = new Map<string, yauzl.Entry>();
    for (const { file, name } of files) {
      const entry = held.get(name);
      if (!entry || entry.uncompressedSize !== file.size)
        throw new NotReusable('its entries are not the earlier commit’s files');
      if (file.mode !== '120000' && entry.compressionMethod === DEFLATED && !bySha.has(file.sha))
        bySha.set(file.sha, entry);
    }

    const spans = new SpanReader(fd);
    const take = (sha: string, name: string, mode: number): ZipEntryData | undefined => {
      const entry = bySha.get(sha);
      if (!entry) return undefined;
      // The local header's own name and extra field lengths place the data (yauzl reads the central directory only).
      const at = entry.relativeOffsetOfLocalHeader;
      const header = spans.read(at, LOCAL_HEADER_BYTES);
      if (header.readUInt32LE(0) !== LOCAL_HEADER_SIGNATURE)
        throw new NotReusable('an entry has no local header');
      const start = at + LOCAL_HEADER_BYTES + header.readUInt16LE(26) + header.readUInt16LE(28);
      const data = spans.read(start, entry.compressedSize);
      return { name, mode, method: DEFLATED, crc32: entry.crc32, size: entry.uncompressedSize, data };
    };

    const small = [...bySha].filter(([, entry]) => entry.uncompressedSize <= SAMPLE_MAX_BYTES);
    const count = Math.min(SAMPLES, small.length);
    const samples = Array.from({ length: count }, (_, i) => small[Math.floor((i * small.length) / count)]!);
    await readBlobs(
      tree.gitDir,
      samples.map(([sha]) => sha),
      (i, content) => {
        const [sha, entry] = samples[i]!;
        const fresh = deflatedEntry(entry.fileName, 0, content);
        const reused = take(sha, entry.fileName, 0);
        if (fresh.crc32 !== reused!.crc32 || !fresh.data.equals(reused!.data))
          throw new NotReusable('its deflated bytes differ from what this server’s deflate writes');
      },
    );

    return {
      has: (sha) => bySha.has(sha),
      take(sha, name, mode) {
        try {
          return take(sha, name, mode);
        } catch (error) {
          throw error instanceof NotReusable ? error : new NotReusable((error as Error).message);
        }
      },
      close() {
        zip.close();
        closeSync(fd);
      },
    };
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/**
 * yauzl's reader over a file read synchronously: reading the central directory of 20,000 entries
 * through `fs.read` (two calls an entry through libuv's pool) took 0.55 s, this a small part of that.
 */
class FileReader extends yauzl.RandomAccessReader {
  constructor(private readonly fd: number) {
    super();
  }

  override read(
    buffer: Buffer,
    offset: number,
    length: number,
    position: number,
    callback: (error: Error | null) => void,
  ): void {
    const answer = callback as (error: Error | null, bytesRead?: number) => void;
    try {
      const bytesRead = readSync(this.fd, buffer, offset, length, position);
      process.nextTick(answer, null, bytesRead);
    } catch (error) {
      process.nextTick(answer, error as Error);
    }
  }
}

/**
 * Reads byte ranges of a file through spans of `SPAN_BYTES`: the entries of consecutive files sit
 * side by side in the earlier zip, so 20,000 of them take a few dozen reads. A span is never
 * overwritten (the writer may still hold slices of it), a new one is read.
 */
class SpanReader {
  private span = Buffer.alloc(0);
  private spanStart = 0;

  constructor(private readonly fd: number) {}

  read(position: number, length: number): Buffer {
    const from = position - this.spanStart;
    if (from < 0 || from + length > this.span.length) {
      this.span = Buffer.allocUnsafe(Math.max(length, SPAN_BYTES));
      this.spanStart = position;
      let filled = 0;
      while (filled < this.span.length) {
        const read = readSync(this.fd, this.span, filled, this.span.length - filled, position + filled);
        if (read === 0) break;
        filled += read;
      }
      if (filled < length) throw new NotReusable('it ends inside an entry');
      this.span = this.span.subarray(0, filled);
      return this.span.subarray(0, length);
    }
    return this.span.subarray(from, from + length);
  }
}
