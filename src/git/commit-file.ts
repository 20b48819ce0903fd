import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { resolveCommit } from './refs.js';
import { GitError, runGit } from './run-git.js';

export interface ServiceCommit {
  commit: string;
  /** False when the branch already held exactly this file, so nothing was committed. */
  created: boolean;
}

/**
 * Commits one file to `branch` of a bare repository as the service, without a working tree:
 * a temporary index built from the branch tip, the blob added, a commit on top, and a
 * compare-and-swap of the branch (so a push landing meanwhile is never overwritten; we rebuild on
 * the new tip and try again). Only on top of the branch: a branch that does not exist yet gets no
 * root commit of ours (`branchMissing`), which would make its owner's first push a
 * non-fast-forward the repository refuses.
 */
export async function commitFileToBranch(
  gitDir: string,
  input: { branch: string; path: string; content: string; message: string; at: Date },
): Promise<ServiceCommit | { branchMissing: true }> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'repo402-index-'));
  const env = {
    GIT_INDEX_FILE: path.join(tmp, 'index'),
    GIT_AUTHOR_NAME: 'repo402',
    GIT_AUTHOR_EMAIL: 'service@repo402.invalid',
    GIT_COMMITTER_NAME: 'repo402',
    GIT_COMMITTER_EMAIL: 'service@repo402.invalid',
    GIT_AUTHOR_DATE: input.at.toISOString(),
    GIT_COMMITTER_DATE: input.at.toISOString(),
  };
  const ref = `refs/heads/${input.branch}`;
  try {
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const parent = await resolveCommit(gitDir, ref);
      if (!parent) return { branchMissing: true };
      const blob = (await runGit(['hash-object', '-w', '--stdin'], { gitDir, input: input.content })).trim();
      const existing = await runGit(['ls-tree', parent, '--', input.path], { gitDir });
      if (existing.split(/\s+/)[2] === blob) return { commit: parent, created: false };
      await runGit(['read-tree', parent], { gitDir, env });
      await runGit(['update-index', '--add', '--cacheinfo', `100644,${blob},${input.path}`], { gitDir, env });
      const tree = (await runGit(['write-tree'], { gitDir, env })).trim();
      const commit = (
        await runGit(['commit-tree', tree, '-p', parent, '-m', input.message], { gitDir, env })
      ).trim();
      try {
        await runGit(['update-ref', '-m', input.message, ref, commit, parent], { gitDir });
        return { commit, created: true };
      } catch (error) {
        if (!(error instanceof GitError)) throw error;
        // The branch moved under us: rebuild on its new tip.
      }
    }
    throw new Error(`could not update ${ref}: it kept moving`);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}
