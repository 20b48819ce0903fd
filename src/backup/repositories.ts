import { copyFile, mkdir, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { GitError, runGit } from '../git/run-git.js';

/**
 * Copies of the hosted repositories taken while creators may be pushing. Git writes objects before
 * it moves a ref and never deletes an object a ref names, so copying the refs first and the
 * objects after gives a copy whose refs all resolve. A `gc --auto` after a push may move loose
 * objects into a new pack meanwhile: the loose objects are copied before the packs (git writes the
 * new pack before deleting what it packed), a file gone between listing and copying is skipped,
 * and each copy is checked with `git fsck --connectivity-only` and taken again if it falls short.
 */

/** Copies that fail their check are taken again this many times before the backup gives up. */
const ATTEMPTS = 3;

/** `owner/slug.git` of every bare repository under `root` (DATA_DIR/repos). */
export async function listRepositories(root: string): Promise<string[]> {
  const owners = await readdir(root, { withFileTypes: true }).catch(missingIsEmpty);
  const found: string[] = [];
  for (const owner of owners.filter((entry) => entry.isDirectory())) {
    const repos = await readdir(path.join(root, owner.name), { withFileTypes: true });
    for (const repo of repos) {
      if (repo.isDirectory() && repo.name.endsWith('.git')) found.push(`${owner.name}/${repo.name}`);
    }
  }
  return found.sort();
}

export async function copyRepository(from: string, to: string): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    await rm(to, { recursive: true, force: true });
    await mkdir(to, { recursive: true });
    // Refs first: every object they name exists before the objects are copied.
    for (const name of ['HEAD', 'config', 'packed-refs', 'refs']) await copyTree(from, to, name);
    const objects = await readdir(path.join(from, 'objects')).catch(missingIsEmpty);
    for (const name of objects.filter((n) => n !== 'pack').sort())
      await copyTree(from, to, `objects/${name}`);
    await copyTree(from, to, 'objects/pack');
    const rest = await readdir(from);
    for (const name of rest.filter(
      (n) => !['HEAD', 'config', 'packed-refs', 'refs', 'objects'].includes(n),
    )) {
      await copyTree(from, to, name);
    }
    try {
      await runGit(['fsck', '--connectivity-only', '--no-dangling', '--no-progress'], { gitDir: to });
      return;
    } catch (error) {
      if (!(error instanceof GitError) || attempt >= ATTEMPTS) throw error;
    }
  }
}

/** Copies `name` (a file or a directory tree) from one repository to the other; a file that vanished is skipped. */
async function copyTree(fromRoot: string, toRoot: string, name: string): Promise<void> {
  const from = path.join(fromRoot, name);
  const to = path.join(toRoot, name);
  const entries = await readdir(from, { withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOTDIR') return 'file' as const;
    if (error.code === 'ENOENT') return 'gone' as const;
    throw error;
  });
  if (entries === 'gone') return;
  if (entries === 'file') {
    await mkdir(path.dirname(to), { recursive: true });
    await copyFile(from, to).catch(skipVanished);
    return;
  }
  await mkdir(to, { recursive: true });
  for (const entry of entries) {
    // Lock files are a writer's work in progress, never part of the repository.
    if (entry.name.endsWith('.lock')) continue;
    if (entry.isDirectory() || entry.isFile()) await copyTree(fromRoot, toRoot, path.join(name, entry.name));
  }
}

function skipVanished(error: NodeJS.ErrnoException): void {
  if (error.code !== 'ENOENT') throw error;
}

function missingIsEmpty(error: NodeJS.ErrnoException): never[] {
  if (error.code === 'ENOENT') return [];
  throw error;
}
