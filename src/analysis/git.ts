import { spawnGit } from '../git/run-git.js';
import { DEFAULT_TREE_LIMITS, type TreeEntry, type TreeLimits, walkTree } from '../git/tree.js';

export type { TreeEntry, TreeLimits } from '../git/tree.js';

/**
 * Every file of the commit's tree (blobs and symlinks; submodules are not files of the artifact).
 * Throws `413 repo_too_large` as soon as the tree passes `limits`, without listing the rest.
 */
export function listTree(
  repoPath: string,
  commit: string,
  limits: TreeLimits = DEFAULT_TREE_LIMITS,
): Promise<TreeEntry[]> {
  return walkTree(repoPath, commit, limits);
}

/**
 * Streams blob contents through one `git cat-file --batch` process: each blob is read once and
 * handed to `onBlob` in the order asked. Memory holds one blob at a time plus pipe buffers.
 */
export async function readBlobs(
  repoPath: string,
  shas: string[],
  onBlob: (index: number, content: Buffer) => void | Promise<void>,
): Promise<void> {
  if (shas.length === 0) return;
  const git = spawnGit(['cat-file', '--batch'], { cwd: repoPath });
  git.done.catch(() => {});
  git.stdin.end(`${shas.join('\n')}\n`);

  let pending: Buffer = Buffer.alloc(0);
  let index = 0;
  let want = -1; // bytes of content (+ trailing LF) still expected for the current blob
  const parts: Buffer[] = [];
  let got = 0;
  try {
    for await (const chunk of git.stdout as AsyncIterable<Buffer>) {
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      while (pending.length > 0) {
        if (want < 0) {
          const lf = pending.indexOf(10);
          if (lf < 0) break;
          const header = pending.subarray(0, lf).toString('latin1');
          pending = pending.subarray(lf + 1);
          const match = /^[0-9a-f]+ \S+ (\d+)$/.exec(header);
          if (!match) throw new Error(`git cat-file: unexpected header ${JSON.stringify(header)}`);
          want = Number(match[1]) + 1;
          parts.length = 0;
          got = 0;
        }
        const take = Math.min(want - got, pending.length);
        parts.push(pending.subarray(0, take));
        got += take;
        pending = pending.subarray(take);
        if (got === want) {
          const whole = parts.length === 1 ? parts[0]! : Buffer.concat(parts, got);
          await onBlob(index++, whole.subarray(0, want - 1));
          want = -1;
        }
      }
    }
  } catch (error) {
    git.stop();
    throw error;
  }
  await git.done;
  if (index !== shas.length) throw new Error(`git cat-file stopped after ${index}/${shas.length} blobs`);
}
