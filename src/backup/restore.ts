import { chmod, mkdir, mkdtemp, readdir, readFile, rename, rm, rmdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { extract } from 'tar';
import type { Config } from '../config.js';
import { PGLITE_OPTIONS } from '../db/pglite-memory.js';
import { filesUnder, MANIFEST_FILE, type Manifest, ManifestSchema, sha256OfFile } from './manifest.js';

/**
 * `repo402 restore FILE`: unpacks a backup into an empty DATA_DIR. Everything is unpacked and
 * checked against the manifest beside DATA_DIR first, and moved into place only when whole, so a
 * damaged or foreign archive leaves nothing behind. The server started on the result migrates the
 * database (an archive from an older version) and, in mainnet or testnet mode, recovers from the
 * chain what happened after the backup (docs/OPERATIONS.md, "Restoring").
 */

/** The manifest of the backup a DATA_DIR was restored from, kept in it. */
export const RESTORED_FROM_FILE = 'restored-from.json';

export class RestoreError extends Error {
  override name = 'RestoreError';
}

export interface RestoreSummary {
  dataDir: string;
  manifest: Omit<Manifest, 'files'> & { file_count: number };
}

export async function restoreBackup(
  config: Pick<Config, 'dataDir' | 'databaseUrl'>,
  file: string,
): Promise<RestoreSummary> {
  const archive = path.resolve(file);
  const info = await stat(archive).catch(() => undefined);
  if (!info?.isFile()) throw new RestoreError(`${archive}: no such file`);
  const dataDir = path.resolve(config.dataDir);
  await assertEmpty(dataDir);
  await mkdir(path.dirname(dataDir), { recursive: true });
  const staging = await mkdtemp(`${dataDir}.restoring-`);
  try {
    await unpack(archive, staging);
    const manifest = await verifiedManifest(archive, staging);
    if (manifest.database.kind === 'pglite' && config.databaseUrl) {
      throw new RestoreError(
        'the archive holds an embedded (PGlite) database but DATABASE_URL is set: unset it to restore into DATA_DIR/db',
      );
    }
    if (manifest.database.kind === 'pglite') await loadEmbeddedDatabase(staging, manifest.database.file);
    // Kept for the operator: what this DATA_DIR was restored from, and when that backup was taken.
    await rename(path.join(staging, MANIFEST_FILE), path.join(staging, RESTORED_FROM_FILE));
    await ownerOnly(staging);
    // The directory was checked empty above; one made meanwhile by something else fails the rename.
    await rmdir(dataDir).catch(() => {});
    await rename(staging, dataDir);
    const { files, ...rest } = manifest;
    return { dataDir, manifest: { ...rest, file_count: files.length } };
  } catch (error) {
    // Retried: a failed extraction may still be closing files it opened when it gave up.
    await rm(staging, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 }).catch(() => {});
    throw error;
  }
}

async function assertEmpty(dataDir: string): Promise<void> {
  const entries = await readdir(dataDir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    if (error.code === 'ENOTDIR') throw new RestoreError(`DATA_DIR=${dataDir} is a file, not a directory`);
    throw error;
  });
  if (entries.length > 0) {
    const shown = entries.sort().slice(0, 6).join(', ');
    throw new RestoreError(
      `DATA_DIR=${dataDir} is not empty (${shown}${entries.length > 6 ? ', …' : ''}): ` +
        'a restore writes only into an empty directory. Point DATA_DIR at a new one, or move this one aside.',
    );
  }
}

/** Regular files and directories only: a link in a backup could point a later write outside DATA_DIR. */
async function unpack(archive: string, staging: string): Promise<void> {
  let refused: string | undefined;
  try {
    await extract({
      file: archive,
      cwd: staging,
      strict: true,
      filter: (entryPath, entry) => {
        const type = 'type' in entry ? entry.type : 'File';
        if (type === 'File' || type === 'Directory') return true;
        refused ??= `${entryPath} (${type})`;
        return false;
      },
    });
  } catch (error) {
    throw new RestoreError(
      `${archive} is not a repo402 backup (it does not read as a gzipped tar: ${(error as Error).message})`,
    );
  }
  if (refused) throw new RestoreError(`${archive} is not a repo402 backup: it holds a link, ${refused}`);
}

async function verifiedManifest(archive: string, staging: string): Promise<Manifest> {
  const text = await readFile(path.join(staging, MANIFEST_FILE), 'utf8').catch(() => undefined);
  if (text === undefined)
    throw new RestoreError(`${archive} is not a repo402 backup: it has no ${MANIFEST_FILE}`);
  let parsed: ReturnType<typeof ManifestSchema.safeParse>;
  try {
    parsed = ManifestSchema.safeParse(JSON.parse(text));
  } catch {
    throw new RestoreError(`${archive} is not a repo402 backup: its ${MANIFEST_FILE} is not JSON`);
  }
  if (!parsed.success) {
    throw new RestoreError(
      `${archive} is not a repo402 backup this version reads: ${MANIFEST_FILE} ${parsed.error.issues[0]?.message ?? 'is invalid'}`,
    );
  }
  const manifest = parsed.data;
  const listed = new Map(manifest.files.map((f) => [f.path, f]));
  const present = (await filesUnder(staging)).filter((f) => f !== MANIFEST_FILE);
  const damaged = (what: string) =>
    new RestoreError(
      `${archive} is damaged: ${what}; nothing was restored (take another backup or an older copy)`,
    );
  for (const file of present) if (!listed.has(file)) throw damaged(`${file} is not in its manifest`);
  for (const expected of manifest.files) {
    const full = path.join(staging, expected.path);
    const size = await stat(full).then(
      (s) => s.size,
      () => undefined,
    );
    if (size === undefined) throw damaged(`${expected.path} is missing`);
    if (size !== expected.size || (await sha256OfFile(full)) !== expected.sha256) {
      throw damaged(`${expected.path} does not match its checksum`);
    }
  }
  return manifest;
}

/** PGlite reads its own dump into a data directory, which then opens as if cleanly stopped. */
async function loadEmbeddedDatabase(staging: string, dumpFile: string): Promise<void> {
  const dump = path.join(staging, dumpFile);
  const client = new PGlite({
    dataDir: path.join(staging, 'db'),
    loadDataDir: new Blob([await readFile(dump)]),
    ...PGLITE_OPTIONS,
  });
  try {
    await client.waitReady;
    await client.query('select 1');
  } finally {
    await client.close();
  }
  await rm(path.join(staging, path.dirname(dumpFile)), { recursive: true, force: true });
}

/** DATA_DIR and what it keeps secret are the server's user's alone, as the server creates them. */
async function ownerOnly(staging: string): Promise<void> {
  await chmod(staging, 0o700);
  for (const name of ['app-secret', 'attestation-key'])
    await chmod(path.join(staging, name), 0o600).catch(() => {});
  const ssh = path.join(staging, 'ssh');
  const keys = await readdir(ssh).catch(() => [] as string[]);
  if (keys.length > 0) await chmod(ssh, 0o700);
  for (const key of keys) await chmod(path.join(ssh, key), 0o600);
}
