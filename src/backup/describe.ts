import type { BackupSummary } from './backup.js';
import type { Manifest } from './manifest.js';
import type { RestoreSummary } from './restore.js';

/** What `repo402 backup` and `repo402 restore` print: what the archive holds, one item a line. */

type Contents = Omit<Manifest, 'files'> & { file_count: number };

function contents(manifest: Contents): string[] {
  const { database, secrets } = manifest;
  const secret = (name: string, state: string) =>
    state === 'archived'
      ? name
      : `${name}: ${state === 'from_environment' ? 'set in the environment, not archived' : 'none'}`;
  return [
    database.kind === 'pglite'
      ? `database: embedded (PGlite), migrated to ${database.migration ?? 'nothing'}`
      : `database: PostgreSQL (migrated to ${database.migration ?? 'nothing'}), not in this archive: use pg_dump / pg_restore`,
    `repositories: ${manifest.repositories.length}`,
    manifest.blobs.store === 'local'
      ? `blobs: ${manifest.blobs.count}`
      : 'blobs: in the S3 bucket, not in this archive (back the bucket up with its own versioning or replication)',
    `secrets: ${[
      secret('app-secret', secrets.app_secret),
      secret('attestation-key', secrets.attestation_key),
      secrets.ssh_host_keys.length > 0
        ? `ssh host keys (${secrets.ssh_host_keys.join(', ')})`
        : 'ssh host keys: none',
    ].join('; ')}`,
    `taken ${manifest.created_at} by repo402 ${manifest.repo402_version}; ${manifest.file_count} files checked by SHA-256`,
  ];
}

export function describeBackup(summary: BackupSummary): string {
  return [
    `backup written to ${summary.file} (${summary.bytes} bytes, readable by its owner only: it holds secrets)`,
    ...contents(summary.manifest),
  ].join('\n');
}

export function describeRestore(summary: RestoreSummary): string {
  return [`restored into ${summary.dataDir}`, ...contents(summary.manifest)].join('\n');
}
