import { diffFiles, type FileChange } from '../git/refs.js';

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
  const changes = await diffFiles(repoPath, from, to);
  const paths = (status: FileChange['status']) =>
    changes.filter((change) => change.status === status).map((change) => change.path);
  return {
    added: paths('A'),
    changed: paths('M'),
    removed: paths('D'),
    additions: changes.reduce((sum, change) => sum + change.additions, 0),
    deletions: changes.reduce((sum, change) => sum + change.deletions, 0),
  };
}
