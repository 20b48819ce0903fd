import { AppError } from '../platform/errors.js';
import { spawnGit } from './run-git.js';

export interface TreeEntry {
  path: string;
  /** Git file mode: 100644, 100755 or 120000 (symlink). */
  mode: string;
  sha: string;
  size: number;
}

export interface TreeLimits {
  /** Files (blobs and symlinks); directories and submodule links together get the same allowance. */
  maxFiles: number;
  /** Total size of the files, before compression. */
  maxBytes: number;
  /** Directories above a file, at most. */
  maxDepth: number;
}

/** SPEC.md's repository cap (200 MB, MiB here, and 20,000 files) and a depth of 64 directories. */
export const DEFAULT_TREE_LIMITS: TreeLimits = {
  maxFiles: 20_000,
  maxBytes: 200 * 1024 * 1024,
  maxDepth: 64,
};

/** Longest path accepted (PATH_MAX); the scan blocks paths over 1,024 bytes, this bounds memory. */
export const MAX_PATH_BYTES = 4096;

export type TreeLimit = 'files' | 'bytes' | 'directories' | 'depth' | 'path_length';

/**
 * Every file of a commit's tree, read as a stream and abandoned the moment the tree passes a
 * limit: `git ls-tree -r` on a tree of 10 entries nested 10 levels names 10^10 files, and one
 * 30,000 levels deep prints gigabytes of paths, so nothing may wait for the whole listing.
 * Directories are listed before their contents (`-t`), which lets depth stop the walk before git
 * descends further. Over a limit: `413 repo_too_large`, naming the limit and never a path.
 * `repoPath` is a bare repository or a work tree.
 */
export async function walkTree(repoPath: string, commit: string, limits: TreeLimits): Promise<TreeEntry[]> {
  const git = spawnGit(['ls-tree', '-r', '-t', '-l', '-z', '--full-tree', '--end-of-options', commit], {
    cwd: repoPath,
  });
  git.stdin.end();
  const entries: TreeEntry[] = [];
  let bytes = 0;
  let directories = 0;
  let over: TreeLimit | undefined;
  const take = (record: Buffer): TreeLimit | undefined => {
    // `<mode> SP <type> SP <object> SP+ <size> TAB <path>`; trees and submodules have size `-`.
    const tab = record.indexOf(9);
    if (tab < 0) throw new Error('git ls-tree printed a record without a path');
    const pathBytes = record.length - tab - 1;
    if (pathBytes > MAX_PATH_BYTES) return 'path_length';
    const [mode, type, sha, size] = record.subarray(0, tab).toString('latin1').split(/ +/);
    const path = record.subarray(tab + 1).toString('utf8');
    let slashes = 0;
    for (let i = tab + 1; i < record.length; i += 1) if (record[i] === 0x2f) slashes += 1;
    if (type === 'blob') {
      if (slashes > limits.maxDepth) return 'depth';
      entries.push({ path, mode: mode!, sha: sha!, size: Number(size) });
      bytes += Number(size);
      if (entries.length > limits.maxFiles) return 'files';
      if (bytes > limits.maxBytes) return 'bytes';
      return undefined;
    }
    // A directory is itself one level deeper than the slashes above it.
    if (type === 'tree' && slashes + 1 > limits.maxDepth) return 'depth';
    directories += 1;
    return directories > limits.maxFiles ? 'directories' : undefined;
  };
  let pending: Buffer = Buffer.alloc(0);
  git.done.catch(() => {}); // awaited below, once reading is over
  try {
    for await (const chunk of git.stdout as AsyncIterable<Buffer>) {
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      let start = 0;
      for (let end = pending.indexOf(0, start); end >= 0; end = pending.indexOf(0, start)) {
        over = take(pending.subarray(start, end));
        start = end + 1;
        if (over) break;
      }
      pending = pending.subarray(start);
      // No record may be longer than its header and the longest path allowed.
      if (!over && pending.length > MAX_PATH_BYTES + 128) over = 'path_length';
      if (over) break;
    }
  } catch (error) {
    git.stop();
    throw error;
  }
  if (over) git.stop();
  await git.done;
  if (over) throw treeTooLarge(commit, limits, over);
  return entries;
}

/** `413 repo_too_large` for a tree over `limit`, in the words every tree refusal uses. */
export function treeTooLarge(commit: string, limits: TreeLimits, limit: TreeLimit): AppError {
  const what: Record<TreeLimit, string> = {
    files: `more than ${limits.maxFiles} files`,
    bytes: `more than ${limits.maxBytes} bytes of files`,
    directories: `more than ${limits.maxFiles} directories and submodules`,
    depth: `a path nested deeper than ${limits.maxDepth} directories`,
    path_length: `a path longer than ${MAX_PATH_BYTES} bytes`,
  };
  return new AppError('repo_too_large', {
    message: `The tree of commit ${commit.slice(0, 12)} holds ${what[limit]}; the limits are ${limits.maxFiles} files, ${limits.maxBytes} bytes and ${limits.maxDepth} directories deep`,
    details: {
      limit,
      max_files: limits.maxFiles,
      max_bytes: limits.maxBytes,
      max_depth: limits.maxDepth,
      max_path_bytes: MAX_PATH_BYTES,
    },
  });
}
