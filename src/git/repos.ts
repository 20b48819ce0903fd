import { chmod, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config.js';
import { runGit } from './run-git.js';

/**
 * Hosted (Rail B) repositories: bare repositories under DATA_DIR/repos/<owner>/<slug>.git, served
 * by the SSH server and read by the release cut. They are never deleted: retiring a listing
 * archives its repository read-only.
 */

export const DEFAULT_BRANCH = 'main';
/** Largest pack one push may send; pushes are compressed, the unpacked tree limit is the release cut's. */
export const MAX_PUSH_BYTES = 512 * 1024 * 1024;

export function reposRoot(config: Config): string {
  return path.join(config.dataDir, 'repos');
}

/** Handles and slugs are lower-case letters, digits and hyphens; anything else never names a path here. */
export const PATH_SAFE_NAME = /^[a-z0-9][a-z0-9-]*$/;

export function repoPath(config: Config, owner: string, slug: string): string {
  if (!PATH_SAFE_NAME.test(owner) || !PATH_SAFE_NAME.test(slug)) {
    throw new Error(`not a repository name: ${JSON.stringify(`${owner}/${slug}`)}`);
  }
  return path.join(reposRoot(config), owner, `${slug}.git`);
}

export function hooksDir(config: Config): string {
  return path.join(config.dataDir, 'git-hooks');
}

export function remoteUrl(config: Config, owner: string, slug: string): string {
  return `ssh://git@${config.ssh.publicHost}:${config.sshPort}/${owner}/${slug}.git`;
}

/** Writes the hook scripts (by name) to the shared hooks directory, which every served git uses through core.hooksPath. */
export async function installHooks(config: Config, hooks: Record<string, string>): Promise<string> {
  const dir = hooksDir(config);
  await mkdir(dir, { recursive: true });
  for (const [name, script] of Object.entries(hooks)) {
    const file = path.join(dir, name);
    await writeFile(file, script, { mode: 0o755 });
    await chmod(file, 0o755);
  }
  return dir;
}

/** The settings every hosted repository starts with, as the `config` of the template `git init` copies. */
const REPOSITORY_CONFIG = `[receive]
\tdenyNonFastForwards = true
\tdenyDeletes = false
\tmaxInputSize = ${MAX_PUSH_BYTES}
\tfsckObjects = true
[core]
\tlogAllRefUpdates = true
`;

/**
 * Creates the bare repository with `main` as its default branch. Non-fast-forward pushes are
 * refused, so a commit the service made (a LICENSE) is never overwritten by a push: the creator
 * pulls first. Idempotent, so a retried creation reuses a directory a failed attempt left.
 *
 * The settings come in with `git init` from a template holding only a `config` (and no sample
 * hooks), one process where a `git config` per setting took six; each process started from a large
 * server costs tens of milliseconds.
 */
export async function provisionRepo(config: Config, owner: string, slug: string): Promise<string> {
  const dir = repoPath(config, owner, slug);
  const template = path.join(config.dataDir, 'git-template');
  await mkdir(template, { recursive: true });
  await writeFile(path.join(template, 'config'), REPOSITORY_CONFIG);
  await mkdir(dir, { recursive: true });
  await runGit([
    'init',
    '--quiet',
    '--bare',
    `--initial-branch=${DEFAULT_BRANCH}`,
    `--template=${template}`,
    dir,
  ]);
  return dir;
}
