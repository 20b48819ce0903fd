import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
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
 * directory of them (searched recursively), or an OSV export zip such as `npm/all.zip`.
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
    await readZipEntries(source, accept);
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

function readZipEntries(file: string, onJson: (text: string) => Promise<void>): Promise<void> {
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
            onJson(Buffer.concat(chunks).toString('utf8')).then(() => zip.readEntry(), reject);
          });
        });
      });
      zip.readEntry();
    });
  });
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
