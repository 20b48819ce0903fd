import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream } from 'node:stream/web';
import type { Db } from '../db/connect.js';
import { type ImportResult, importAdvisories } from './advisory-import.js';
import {
  advisoryDatasetStamp,
  advisorySyncState,
  recordAdvisoryCheck,
  recordAdvisoryImport,
} from './advisory-store.js';
import { osvStamp } from './dependency-checks.js';
import { SUPPORTED_ECOSYSTEMS } from './osv.js';

/** A whole export is downloaded within this time, or the attempt fails (and is tried next time). */
const DOWNLOAD_TIMEOUT_MS = 30 * 60 * 1000;
/** npm's export, the largest, is a few hundred MB; far more than that is not an OSV export. */
const MAX_EXPORT_BYTES = 4 * 1024 ** 3;

export interface EcosystemSync {
  ecosystem: string;
  url: string;
  /** `imported`: a new export was read (`import` says what changed); `not_modified`: 304. */
  outcome: 'imported' | 'not_modified' | 'failed';
  import?: ImportResult;
  error?: string;
}

export interface SyncResult {
  ecosystems: EcosystemSync[];
  /** Records added or replaced, over every ecosystem. */
  imported: number;
  /** The advisory checks' `tool_version` afterwards (`osvStamp`). */
  dataset: string;
}

export interface SyncOptions {
  /** The mirror of the OSV exports: `<baseUrl>/<ecosystem>/all.zip`. */
  baseUrl: string;
  /** Downloads are written below it and removed once imported. */
  tempDir: string;
  now: () => Date;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

/**
 * Brings the advisory tables up to date from the OSV exports of every ecosystem the analysis
 * resolves. Each export is asked for with the validators of the one imported last (a restart
 * still sends them), streamed to a file and imported through `importAdvisories`. An ecosystem
 * that cannot be fetched or read is reported and logged, and keeps the records it has: nothing
 * is ever deleted here, so the data only ages (and `advisories_stale` says so).
 */
export async function syncAdvisories(db: Db, options: SyncOptions): Promise<SyncResult> {
  await mkdir(options.tempDir, { recursive: true });
  const ecosystems: EcosystemSync[] = [];
  for (const ecosystem of SUPPORTED_ECOSYSTEMS) ecosystems.push(await syncEcosystem(db, ecosystem, options));
  return {
    ecosystems,
    imported: ecosystems.reduce((sum, e) => sum + (e.import?.imported ?? 0), 0),
    dataset: osvStamp(await advisoryDatasetStamp(db)),
  };
}

async function syncEcosystem(db: Db, ecosystem: string, options: SyncOptions): Promise<EcosystemSync> {
  const url = `${options.baseUrl.replace(/\/+$/, '')}/${encodeURIComponent(ecosystem)}/all.zip`;
  const state = await advisorySyncState(db, ecosystem);
  const headers: Record<string, string> = {};
  if (state?.url === url && state.etag) headers['if-none-match'] = state.etag;
  if (state?.url === url && state.lastModified) headers['if-modified-since'] = state.lastModified;
  const dir = await mkdtemp(path.join(options.tempDir, 'osv-'));
  try {
    const response = await fetch(url, { headers, signal: AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS) });
    if (response.status === 304) {
      await response.body?.cancel();
      await recordAdvisoryCheck(db, { ecosystem, url, checkedAt: options.now(), error: null });
      return { ecosystem, url, outcome: 'not_modified' };
    }
    if (response.status !== 200 || !response.body) {
      await response.body?.cancel();
      throw new Error(`the mirror answered ${response.status}`);
    }
    const file = path.join(dir, 'all.zip');
    await pipeline(
      Readable.fromWeb(response.body as ReadableStream),
      atMost(MAX_EXPORT_BYTES),
      createWriteStream(file),
    );
    const result = await importAdvisories(db, file, options.now());
    const dataset = osvStamp(await advisoryDatasetStamp(db));
    const now = options.now();
    await recordAdvisoryImport(db, {
      ecosystem,
      url,
      etag: response.headers.get('etag'),
      lastModified: response.headers.get('last-modified'),
      importedAt: now,
      datasetStamp: dataset,
      checkedAt: now,
      error: null,
    });
    options.log.info({ ecosystem, url, ...result, dataset }, 'advisory export imported');
    return { ecosystem, url, outcome: 'imported', import: result };
  } catch (error) {
    const reason = describe(error);
    options.log.warn(
      { ecosystem, url, reason },
      'advisory sync failed; the advisory data already stored is kept',
    );
    await recordAdvisoryCheck(db, { ecosystem, url, checkedAt: options.now(), error: reason });
    return { ecosystem, url, outcome: 'failed', error: reason };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function atMost(limit: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      done(seen > limit ? new Error(`the export is larger than ${limit} bytes`) : null, chunk);
    },
  });
}

/** fetch reports a refused connection as `fetch failed`, the reason in `cause`. */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause as { code?: string; message?: string } | undefined;
  return cause ? `cannot reach the mirror: ${cause.code ?? cause.message}` : error.message;
}
