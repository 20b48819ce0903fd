import { createHash } from 'node:crypto';
import { closeSync, openSync, writevSync } from 'node:fs';

/** One entry as it goes into the zip: its bytes already in their final form (stored or raw deflate). */
export interface ZipEntryData {
  name: string;
  /** Unix mode with its file type (`0o100644`, `0o100755`, `0o120777`). */
  mode: number;
  method: typeof STORED | typeof DEFLATED;
  crc32: number;
  /** Bytes of the content before compression. */
  size: number;
  /** The entry's data as it is written: the content when stored, raw deflate when deflated. */
  data: Buffer;
}

export const STORED = 0;
export const DEFLATED = 8;

const LOCAL_HEADER = 0x04034b50;
const CENTRAL_HEADER = 0x02014b50;
const END_OF_CENTRAL = 0x06054b50;
const ZIP64_END_OF_CENTRAL = 0x06064b50;
const ZIP64_LOCATOR = 0x07064b50;
const ZIP64_EXTRA = 0x0001;
const MADE_BY_UNIX = 3 << 8;
const VERSION_DEFAULT = 20;
const VERSION_ZIP64 = 45;
/** General purpose bit 11: the name is UTF-8. */
const UTF8_NAME = 1 << 11;
/** 1980-01-01 00:00:00, the first moment a DOS date can say: day 1, month 1, year 0. */
const DOS_DATE = (1 << 5) | 1;
const DOS_TIME = 0;
const MAX32 = 0xffffffff;
const MAX16 = 0xffff;
/** Output is gathered into writes of about this size: 20,000 small entries are not 60,000 system calls. */
const WRITE_CHUNK = 1 << 20;

interface CentralRecord {
  name: Buffer;
  entry: ZipEntryData;
  offset: number;
}

/**
 * Writes a zip whose bytes depend only on the entries given, in the order given, and the comment:
 * one fixed time, no extended timestamp or other extra fields, sizes and CRC known up front (in
 * the local header, no data descriptors), Unix modes in the external attributes, UTF-8 names.
 * Zip64 records are added only where a size, an offset or the entry count needs them.
 *
 * The entries' data arrive in final form, which is what lets a release reuse the deflated bytes
 * of an earlier zip (yazl and zip.js cannot take them fast enough; docs/DECISIONS.md D-183).
 * Written synchronously: it runs in the zip worker, whose thread does nothing else. The SHA-256
 * and size of what was written are counted on the way.
 */
export class ZipFileWriter {
  private readonly fd: number;
  private readonly hash = createHash('sha256');
  private readonly central: CentralRecord[] = [];
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private offset = 0;

  constructor(file: string) {
    this.fd = openSync(file, 'w');
  }

  add(entry: ZipEntryData): void {
    const name = Buffer.from(entry.name, 'utf8');
    if (name.length > MAX16) throw new Error('zip entry name longer than 65,535 bytes');
    const zip64 = entry.size >= MAX32 || entry.data.length >= MAX32;
    const header = Buffer.alloc(30 + name.length + (zip64 ? 20 : 0));
    header.writeUInt32LE(LOCAL_HEADER, 0);
    header.writeUInt16LE(zip64 ? VERSION_ZIP64 : VERSION_DEFAULT, 4);
    header.writeUInt16LE(UTF8_NAME, 6);
    header.writeUInt16LE(entry.method, 8);
    header.writeUInt16LE(DOS_TIME, 10);
    header.writeUInt16LE(DOS_DATE, 12);
    header.writeUInt32LE(entry.crc32 >>> 0, 14);
    header.writeUInt32LE(zip64 ? MAX32 : entry.data.length, 18);
    header.writeUInt32LE(zip64 ? MAX32 : entry.size, 22);
    header.writeUInt16LE(name.length, 26);
    header.writeUInt16LE(zip64 ? 20 : 0, 28);
    name.copy(header, 30);
    if (zip64) {
      const extra = 30 + name.length;
      header.writeUInt16LE(ZIP64_EXTRA, extra);
      header.writeUInt16LE(16, extra + 2);
      writeUInt64(header, entry.size, extra + 4);
      writeUInt64(header, entry.data.length, extra + 12);
    }
    this.central.push({ name, entry, offset: this.offset });
    this.write(header);
    this.write(entry.data);
  }

  /** Writes the central directory and closes the file; `comment` is the archive comment (ASCII). */
  finish(comment: string): { sha256: string; sizeBytes: number } {
    const start = this.offset;
    for (const record of this.central) this.write(centralHeader(record));
    const size = this.offset - start;
    const count = this.central.length;
    if (count >= MAX16 || start >= MAX32 || size >= MAX32) {
      const zip64End = this.offset;
      const record = Buffer.alloc(56);
      record.writeUInt32LE(ZIP64_END_OF_CENTRAL, 0);
      writeUInt64(record, 44, 4);
      record.writeUInt16LE(MADE_BY_UNIX | VERSION_ZIP64, 12);
      record.writeUInt16LE(VERSION_ZIP64, 14);
      writeUInt64(record, count, 24);
      writeUInt64(record, count, 32);
      writeUInt64(record, size, 40);
      writeUInt64(record, start, 48);
      const locator = Buffer.alloc(20);
      locator.writeUInt32LE(ZIP64_LOCATOR, 0);
      writeUInt64(locator, zip64End, 8);
      locator.writeUInt32LE(1, 16);
      this.write(record);
      this.write(locator);
    }
    const text = Buffer.from(comment, 'ascii');
    const end = Buffer.alloc(22 + text.length);
    end.writeUInt32LE(END_OF_CENTRAL, 0);
    end.writeUInt16LE(Math.min(count, MAX16), 8);
    end.writeUInt16LE(Math.min(count, MAX16), 10);
    end.writeUInt32LE(Math.min(size, MAX32), 12);
    end.writeUInt32LE(Math.min(start, MAX32), 16);
    end.writeUInt16LE(text.length, 20);
    text.copy(end, 22);
    this.write(end);
    this.flush();
    closeSync(this.fd);
    return { sha256: this.hash.digest('hex'), sizeBytes: this.offset };
  }

  /** Closes the file without finishing it (the caller removes or overwrites it). */
  abandon(): void {
    closeSync(this.fd);
  }

  private write(bytes: Buffer): void {
    this.pending.push(bytes);
    this.pendingBytes += bytes.length;
    this.offset += bytes.length;
    if (this.pendingBytes >= WRITE_CHUNK) this.flush();
  }

  private flush(): void {
    let pieces = this.pending;
    for (const piece of pieces) this.hash.update(piece);
    for (let left = this.pendingBytes; left > 0; ) {
      let written = writevSync(this.fd, pieces);
      left -= written;
      // A short write: go on from the first byte not written.
      const rest: Buffer[] = [];
      for (const piece of pieces) {
        if (written >= piece.length) written -= piece.length;
        else {
          rest.push(piece.subarray(written));
          written = 0;
        }
      }
      pieces = rest;
    }
    this.pending = [];
    this.pendingBytes = 0;
  }
}

function centralHeader({ name, entry, offset }: CentralRecord): Buffer {
  // The zip64 extra field holds, in this order, only the values whose 32-bit fields say 0xFFFFFFFF.
  const wide = [entry.size, entry.data.length, offset].map((value) => value >= MAX32);
  const extraLength = wide.some(Boolean) ? 4 + 8 * wide.filter(Boolean).length : 0;
  const header = Buffer.alloc(46 + name.length + extraLength);
  const version = extraLength ? VERSION_ZIP64 : VERSION_DEFAULT;
  header.writeUInt32LE(CENTRAL_HEADER, 0);
  header.writeUInt16LE(MADE_BY_UNIX | version, 4);
  header.writeUInt16LE(version, 6);
  header.writeUInt16LE(UTF8_NAME, 8);
  header.writeUInt16LE(entry.method, 10);
  header.writeUInt16LE(DOS_TIME, 12);
  header.writeUInt16LE(DOS_DATE, 14);
  header.writeUInt32LE(entry.crc32 >>> 0, 16);
  header.writeUInt32LE(Math.min(entry.data.length, MAX32), 20);
  header.writeUInt32LE(Math.min(entry.size, MAX32), 24);
  header.writeUInt16LE(name.length, 28);
  header.writeUInt16LE(extraLength, 30);
  // Comment length, disk number and internal attributes stay 0.
  header.writeUInt32LE(((entry.mode & 0xffff) << 16) >>> 0, 38);
  header.writeUInt32LE(Math.min(offset, MAX32), 42);
  name.copy(header, 46);
  if (extraLength) {
    let at = 46 + name.length;
    header.writeUInt16LE(ZIP64_EXTRA, at);
    header.writeUInt16LE(extraLength - 4, at + 2);
    at += 4;
    for (const [i, value] of [entry.size, entry.data.length, offset].entries()) {
      if (!wide[i]) continue;
      writeUInt64(header, value, at);
      at += 8;
    }
  }
  return header;
}

function writeUInt64(buffer: Buffer, value: number, at: number): void {
  buffer.writeBigUInt64LE(BigInt(value), at);
}
