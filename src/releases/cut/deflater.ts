import { crc32, deflateRawSync } from 'node:zlib';
import { DEFLATED, type ZipEntryData } from './zip-writer.js';

/** zlib's default level: what yazl used, so the zips kept their size. */
const DEFLATE_LEVEL = 6;

/**
 * Written as the archive comment of every zip: deflate's output is the same only for the same
 * zlib, version and level, so a zip says which made it, and its entries are reused by a later
 * release only when the running deflater says the same (docs/DECISIONS.md D-184).
 */
export const DEFLATER_RECORD = `repo402 zip: deflate level ${DEFLATE_LEVEL}, zlib ${process.versions.zlib}`;

/**
 * A file's entry, deflated in the calling thread: in the zip worker that is a thread at nice 10,
 * where zlib's asynchronous calls would run in libuv's pool at the HTTP thread's priority.
 */
export function deflatedEntry(name: string, mode: number, content: Buffer): ZipEntryData {
  return {
    name,
    mode,
    method: DEFLATED,
    crc32: crc32(content),
    size: content.length,
    data: deflateRawSync(content, { level: DEFLATE_LEVEL }),
  };
}
