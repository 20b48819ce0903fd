import { createWriteStream } from 'node:fs';
import { copyFile, link, mkdir, mkdtemp, readdir, rm, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { create as createTar } from 'tar';
import type { AppContext } from '../context.js';
import { appliedMigration } from '../db/migrate.js';
import { reposRoot } from '../git/repos.js';
import { VERSION } from '../platform/version.js';
import {
  describeFiles,
  FORMAT,
  FORMAT_VERSION,
  MANIFEST_FILE,
  type Manifest,
  PGLITE_DUMP_FILE,
} from './manifest.js';
import { copyRepository, listRepositories } from './repositories.js';

/**
 * `repo402 backup FILE`: one gzipped tar of everything DATA_DIR holds that cannot be made again
 * (the embedded database, the hosted repositories, local blobs, the app secret, the attestation
 * key and the SSH host keys), with a manifest of checksums. It runs in the process that holds the
 * database (the CLI reaches the running server through its control socket), so the database copy
 * is taken between two statements while the server keeps serving.
 */

export interface BackupSummary {
  file: string;
  bytes: number;
  manifest: Omit<Manifest, 'files'> & { file_count: number };
}

export class BackupError extends Error {
  override name = 'BackupError';
}

export async function createBackup(ctx: AppContext, file: string): Promise<BackupSummary> {
  const target = path.resolve(file);
  await assertWritableTarget(target);
  const tmp = path.join(ctx.config.dataDir, 'tmp');
  await mkdir(tmp, { recursive: true, mode: 0o700 });
  const staging = await mkdtemp(path.join(tmp, 'backup-'));
  try {
    // The database first: repositories and blobs copied after it hold at least what it names.
    const database = await stageDatabase(ctx, staging);
    const secrets = await stageSecrets(ctx, staging);
    const repositories = await listRepositories(reposRoot(ctx.config));
    for (const repo of repositories) {
      await copyRepository(path.join(reposRoot(ctx.config), repo), path.join(staging, 'repos', repo));
    }
    const blobCount = ctx.blobs.kind === 'local' ? await stageBlobs(ctx.config.dataDir, staging) : 0;
    const files = await describeFiles(staging);
    const manifest: Manifest = {
      format: FORMAT,
      format_version: FORMAT_VERSION,
      repo402_version: VERSION,
      created_at: ctx.clock.now().toISOString(),
      database,
      secrets,
      repositories,
      blobs: { store: ctx.blobs.kind === 'local' ? 'local' : 's3', count: blobCount },
      files,
    };
    await writeFile(path.join(staging, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`, {
      mode: 0o600,
    });
    const bytes = await writeArchive(staging, [MANIFEST_FILE, ...files.map((f) => f.path)], target);
    const { files: listed, ...rest } = manifest;
    return { file: target, bytes, manifest: { ...rest, file_count: listed.length } };
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

async function assertWritableTarget(target: string): Promise<void> {
  const exists = await stat(target).then(
    () => true,
    () => false,
  );
  if (exists)
    throw new BackupError(`${target} exists already; name a new file (a backup never overwrites one)`);
  const dir = await stat(path.dirname(target)).catch(() => undefined);
  if (!dir?.isDirectory()) throw new BackupError(`${path.dirname(target)} is not a directory`);
}

async function stageDatabase(ctx: AppContext, staging: string): Promise<Manifest['database']> {
  const migration = await appliedMigration(ctx.database);
  if (!ctx.database.dumpEmbedded) return { kind: 'postgres', migration };
  const dump = await ctx.database.dumpEmbedded();
  const file = path.join(staging, PGLITE_DUMP_FILE);
  await mkdir(path.dirname(file), { recursive: true });
  await pipeline(Readable.fromWeb(dump.stream() as never), createWriteStream(file, { mode: 0o600 }));
  return { kind: 'pglite', file: PGLITE_DUMP_FILE, migration };
}

async function stageSecrets(ctx: AppContext, staging: string): Promise<Manifest['secrets']> {
  const { dataDir } = ctx.config;
  const secretFile = async (name: string, fromEnvironment: boolean) => {
    if (fromEnvironment) return 'from_environment' as const;
    const copied = await copyFile(path.join(dataDir, name), path.join(staging, name)).then(
      () => true,
      (error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return false;
        throw error;
      },
    );
    return copied ? ('archived' as const) : ('absent' as const);
  };
  const appSecret = await secretFile('app-secret', ctx.config.appSecret !== undefined);
  const attestationKey = await secretFile('attestation-key', ctx.config.attestationKey !== undefined);
  const hostKeys = (await readdir(path.join(dataDir, 'ssh')).catch(() => [] as string[])).sort();
  if (hostKeys.length > 0) await mkdir(path.join(staging, 'ssh'), { mode: 0o700 });
  for (const key of hostKeys) await copyFile(path.join(dataDir, 'ssh', key), path.join(staging, 'ssh', key));
  return { app_secret: appSecret, attestation_key: attestationKey, ssh_host_keys: hostKeys };
}

/**
 * Local blobs are written once under a temporary name and renamed into place, never changed after:
 * a hard link is a copy that costs no space (a file copy where links are refused).
 */
async function stageBlobs(dataDir: string, staging: string): Promise<number> {
  const root = path.join(dataDir, 'blobs');
  const entries = await readdir(root, { recursive: true, withFileTypes: true }).catch(() => []);
  let count = 0;
  for (const entry of entries) {
    if (!entry.isFile() || entry.name.endsWith('.partial')) continue;
    const from = path.join(entry.parentPath, entry.name);
    const to = path.join(staging, 'blobs', path.relative(root, from));
    await mkdir(path.dirname(to), { recursive: true });
    await link(from, to).catch(() => copyFile(from, to));
    count += 1;
  }
  return count;
}

/** Writes the archive under a temporary name, owner-only, and links it into place only when whole. */
async function writeArchive(staging: string, members: string[], target: string): Promise<number> {
  const partial = `${target}.${process.pid}.partial`;
  try {
    await pipeline(
      createTar({ gzip: true, cwd: staging, portable: true, noDirRecurse: true }, members),
      createWriteStream(partial, { mode: 0o600, flags: 'wx' }),
    );
    // `link` refuses to replace a file that appeared meanwhile, where `rename` would not.
    await link(partial, target).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'EEXIST') throw new BackupError(`${target} appeared while the backup was written`);
      throw error;
    });
    return (await stat(target)).size;
  } finally {
    await unlink(partial).catch(() => {});
  }
}
