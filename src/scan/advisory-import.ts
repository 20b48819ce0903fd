import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { crc32 } from 'node:zlib';
import yauzl from 'yauzl';
import type { Db } from '../db/connect.js';
import { upsertAdvisories } from './advisory-store.js';
import { isOsvRecord, type OsvRecord } from './osv.js';

const BATCH = 500;
/** One OSV record is a few kilobytes; anything far larger is not one. */
const MAX_RECORD_BYTES = 8 * 1024 * 1024;

export interface ImportResult {
  read: number;
  imported: number;
  skipped: number;
}

/**
 * Loads OSV records into the advisory tables from a JSON file (one record or an array), a
 * directory of them (searched recursively), or an OSV export zip such as `npm/all.zip` (checked
 * whole first: a damaged zip writes nothing).
 */
export async function importAdvisories(db: Db, source: string, now: Date): Promise<ImportResult> {
  const result: ImportResult = { read: 0, imported: 0, skipped: 0 };
  let batch: OsvRecord[] = [];
  const flush = async () => {
    result.imported += await upsertAdvisories(db, batch, now);
    batch = [];
  };
  const accept = async (text: string) => {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      result.skipped++;
      return;
    }
    for (const item of Array.isArray(value) ? value : [value]) {
      result.read++;
      if (!isOsvRecord(item)) {
        result.skipped++;
        continue;
      }
      batch.push(item);
      if (batch.length >= BATCH) await flush();
    }
  };
  const info = await stat(source);
  if (info.isDirectory()) {
    for (const file of await jsonFilesUnder(source)) await accept(await readFile(file, 'utf8'));
  } else if (/\.zip$/i.test(source)) {
    await verifyZip(source);
    await readZipEntries(source, (data) => accept(data.toString('utf8')));
  } else {
    await accept(await readFile(source, 'utf8'));
  }
  await flush();
  return result;
}

async function jsonFilesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith('.json'))
    .map((e) => path.join(e.parentPath ?? (e as unknown as { path: string }).path, e.name))
    .sort();
}

/**
 * Every JSON entry of the zip an import reads, one at a time, in order. yauzl checks each entry's
 * inflated size against the central directory; `verifyZip` adds the CRC.
 */
function readZipEntries(
  file: string,
  onEntry: (data: Buffer, entry: yauzl.Entry) => Promise<void>,
): Promise<void> {
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true, autoClose: true }, (openError, zip) => {
      if (openError || !zip) return reject(openError ?? new Error('cannot open zip'));
      zip.on('error', reject);
      zip.on('end', () => resolve());
      zip.on('entry', (entry: yauzl.Entry) => {
        if (!entry.fileName.endsWith('.json') || entry.uncompressedSize > MAX_RECORD_BYTES)
          return zip.readEntry();
        zip.openReadStream(entry, (streamError, stream) => {
          if (streamError || !stream) return reject(streamError ?? new Error('cannot read zip entry'));
          const chunks: Buffer[] = [];
          stream.on('data', (chunk: Buffer) => chunks.push(chunk));
          stream.on('error', reject);
          stream.on('end', () => {
            onEntry(Buffer.concat(chunks), entry).then(() => zip.readEntry(), reject);
          });
        });
      });
      zip.readEntry();
    });
  });
}

/**
 * Reads the whole zip once before anything is written: a truncated or damaged download (a bad
 * central directory, an entry that does not inflate to its size and CRC) fails here, so an
 * import never stops half-way through an archive.
 */
async function verifyZip(file: string): Promise<void> {
  try {
    await readZipEntries(file, async (data, entry) => {
      if (crc32(data) !== entry.crc32) throw new Error(`${entry.fileName} does not match its CRC`);
    });
  } catch (error) {
    throw new Error(`not a readable zip: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Real OSV records shipped with the service, so the checks have data before the first import. */
export const SEED_DIR = fileURLToPath(new URL('../../src/scan/osv-seed', import.meta.url));
const seeded = new WeakSet<Db>();

/** Loads the shipped seed once per database handle; records already present (or newer) are kept. */
export async function ensureAdvisorySeed(db: Db, now: Date): Promise<void> {
  if (seeded.has(db)) return;
  await importAdvisories(db, SEED_DIR, now);
  seeded.add(db);
}
