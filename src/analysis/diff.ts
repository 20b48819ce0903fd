import { runGit } from './git.js';

export interface DiffSummary {
  files_added: number;
  files_changed: number;
  files_removed: number;
  additions: number;
  deletions: number;
  components_touched: string[];
}

export interface TreeDiff {
  added: string[];
  changed: string[];
  removed: string[];
  additions: number;
  deletions: number;
}

/** What changed between two commits of the same repository (renames count as a removal and an addition). */
export async function diffCommits(repoPath: string, from: string, to: string): Promise<TreeDiff> {
  const [status, numstat] = await Promise.all([
    runGit(repoPath, ['diff', '--name-status', '-z', '--no-renames', '--no-ext-diff', from, to]),
    runGit(repoPath, ['diff', '--numstat', '-z', '--no-renames', '--no-ext-diff', from, to]),
  ]);
  const diff: TreeDiff = { added: [], changed: [], removed: [], additions: 0, deletions: 0 };
  const fields = status.toString('utf8').split('\0');
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const code = fields[i]!;
    const file = fields[i + 1]!;
    if (code === 'A') diff.added.push(file);
    else if (code === 'D') diff.removed.push(file);
    else if (code) diff.changed.push(file);
  }
  for (const record of numstat.toString('utf8').split('\0')) {
    const match = /^(\d+|-)\t(\d+|-)\t/.exec(record);
    if (!match) continue;
    // Binary files show "-": they add and delete no lines.
    if (match[1] !== '-') diff.additions += Number(match[1]);
    if (match[2] !== '-') diff.deletions += Number(match[2]);
  }
  return diff;
}
