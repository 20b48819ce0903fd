import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';

/**
 * What a backup archive holds, written as `manifest.json`, its first member: every other member
 * with its size and SHA-256, so a restore proves the archive whole before it writes anything.
 */

export const MANIFEST_FILE = 'manifest.json';
/** The archive member holding the embedded database, as PGlite's own `dumpDataDir` tar. */
export const PGLITE_DUMP_FILE = 'database/pglite.tar';
export const FORMAT = 'repo402-backup';
export const FORMAT_VERSION = 1;

const Sha256 = z.string().regex(/^[0-9a-f]{64}$/);

export const ManifestSchema = z.object({
  format: z.literal(FORMAT),
  format_version: z.literal(FORMAT_VERSION),
  repo402_version: z.string(),
  created_at: z.string(),
  database: z.discriminatedUnion('kind', [
    z.object({
      kind: z.literal('pglite'),
      file: z.literal(PGLITE_DUMP_FILE),
      /** The newest migration applied: a restore runs this version or a newer one. */
      migration: z.string().nullable(),
    }),
    // On PostgreSQL the database is the operator's pg_dump, taken beside this archive.
    z.object({ kind: z.literal('postgres'), migration: z.string().nullable() }),
  ]),
  /** Secrets kept in DATA_DIR that the archive holds; one set in the environment is not there. */
  secrets: z.object({
    app_secret: z.enum(['archived', 'from_environment', 'absent']),
    attestation_key: z.enum(['archived', 'from_environment', 'absent']),
    ssh_host_keys: z.array(z.string()),
  }),
  repositories: z.array(z.string()),
  blobs: z.object({ store: z.enum(['local', 's3']), count: z.number().int().nonnegative() }),
  files: z.array(z.object({ path: z.string(), size: z.number().int().nonnegative(), sha256: Sha256 })),
});

export type Manifest = z.infer<typeof ManifestSchema>;
export type ManifestFile = Manifest['files'][number];

export async function sha256OfFile(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Every regular file under `root`, as archive paths (forward slashes), sorted. */
export async function filesUnder(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'))
    .sort();
}

/** Size and checksum of each file under `root` but the manifest itself. */
export async function describeFiles(root: string): Promise<ManifestFile[]> {
  const files: ManifestFile[] = [];
  for (const file of await filesUnder(root)) {
    if (file === MANIFEST_FILE) continue;
    const full = path.join(root, file);
    files.push({ path: file, size: (await stat(full)).size, sha256: await sha256OfFile(full) });
  }
  return files;
}
