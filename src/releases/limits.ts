import { treeStats } from '../git/refs.js';
import { AppError } from '../platform/errors.js';

/** SPEC.md: a repository above 200 MB (MiB here) or 20,000 files cannot be cut. */
export const MAX_TREE_BYTES = 200 * 1024 * 1024;
export const MAX_TREE_FILES = 20_000;

/** `413 repo_too_large` when the commit's tree is over either limit. */
export async function assertWithinLimits(gitDir: string, commit: string): Promise<void> {
  const stats = await treeStats(gitDir, commit);
  if (stats.bytes > MAX_TREE_BYTES || stats.files > MAX_TREE_FILES) {
    throw new AppError('repo_too_large', {
      message: `The tree at ${commit.slice(0, 12)} has ${stats.files} files and ${stats.bytes} bytes; the limits are ${MAX_TREE_FILES} files and ${MAX_TREE_BYTES} bytes`,
      details: {
        files: stats.files,
        bytes: stats.bytes,
        max_files: MAX_TREE_FILES,
        max_bytes: MAX_TREE_BYTES,
      },
    });
  }
}
