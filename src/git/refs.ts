import { GitError, runGit } from './run-git.js';

/** Read-only questions the release cut and sync ask a repository, answered by the git binary. */

export interface TagRef {
  /** The tag name without `refs/tags/`. */
  name: string;
  /** The commit the tag points at (through an annotated tag object when there is one). */
  commit: string;
  annotated: boolean;
}

export const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

/** Tag and commit messages are read up to this much: a changelog, not a creator's 50 MB message. */
const MESSAGE_READ_BYTES = 64 * 1024;

/**
 * Tags under refs/tags/ that point at a commit, directly or through annotated tags: a tag of an
 * annotated tag peels through every level to its commit (for-each-ref's `*` peels only one).
 */
export async function listTags(gitDir: string): Promise<TagRef[]> {
  const out = await runGit(
    [
      'for-each-ref',
      '--format=%(refname:strip=2)%00%(objecttype)%00%(objectname)%00%(*objecttype)%00%(*objectname)',
      'refs/tags/',
    ],
    { gitDir },
  );
  const tags: TagRef[] = [];
  const nested: Array<{ name: string; object: string }> = [];
  for (const line of out.split('\n')) {
    if (!line) continue;
    const [name, type, object, peeledType, peeled] = line.split('\0') as [
      string,
      string,
      string,
      string,
      string,
    ];
    if (type === 'commit') tags.push({ name, commit: object, annotated: false });
    else if (type === 'tag' && peeledType === 'commit') tags.push({ name, commit: peeled, annotated: true });
    else if (type === 'tag' && peeledType === 'tag') nested.push({ name, object: peeled });
  }
  if (nested.length > 0) {
    const peeled = await runGit(['cat-file', '--batch-check=%(objectname) %(objecttype)'], {
      gitDir,
      input: nested.map((tag) => `${tag.object}^{commit}\n`).join(''),
    });
    peeled.split('\n').forEach((line, index) => {
      const [commit, type] = line.split(' ');
      if (type === 'commit' && nested[index]) {
        tags.push({ name: nested[index].name, commit: commit!, annotated: true });
      }
    });
  }
  return tags;
}

/** The commit `ref` names (a branch, tag or commit id), or undefined when it names none. */
export function resolveCommit(gitDir: string, ref: string): Promise<string | undefined> {
  return resolveObject(gitDir, ref, 'commit');
}

/** The tree of the commit `ref` names, or undefined when the repository does not have it. */
export function resolveTree(gitDir: string, ref: string): Promise<string | undefined> {
  return resolveObject(gitDir, ref, 'tree');
}

async function resolveObject(
  gitDir: string,
  ref: string,
  type: 'commit' | 'tree',
): Promise<string | undefined> {
  try {
    const out = await runGit(['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{${type}}`], {
      gitDir,
    });
    return out.trim() || undefined;
  } catch (error) {
    if (error instanceof GitError) return undefined;
    throw error;
  }
}

/** Whether `ref` is a full tag name or refs/tags path, and which. */
export async function tagNamed(gitDir: string, ref: string): Promise<TagRef | undefined> {
  const name = ref.startsWith('refs/tags/') ? ref.slice('refs/tags/'.length) : ref;
  return (await listTags(gitDir)).find((tag) => tag.name === name);
}

/** The message of an annotated tag, without a signature block; undefined for lightweight tags. */
export async function annotatedTagMessage(gitDir: string, tag: string): Promise<string | undefined> {
  const out = await runGit(
    ['for-each-ref', '--format=%(objecttype)%00%(contents:subject)%00%(contents:body)', `refs/tags/${tag}`],
    { gitDir, maxOutputBytes: MESSAGE_READ_BYTES, truncate: true },
  );
  const [type, subject, body] = out.replace(/\n$/, '').split('\0');
  if (type !== 'tag') return undefined;
  return [subject, body]
    .filter((part) => part?.trim())
    .join('\n\n')
    .trim();
}

/** Commit subjects reachable from `commit` but not from `since`, newest first (at most `limit`). */
export async function commitSubjects(
  gitDir: string,
  commit: string,
  since: string | undefined,
  limit = 200,
): Promise<string[]> {
  const range = since ? [commit, `^${since}`] : [commit];
  const out = await runGit(['log', `--max-count=${limit}`, '--format=%s', ...range, '--'], {
    gitDir,
    maxOutputBytes: MESSAGE_READ_BYTES,
    truncate: true,
  });
  return out.split('\n').filter(Boolean);
}

export interface FileChange {
  status: 'A' | 'M' | 'D';
  path: string;
  additions: number;
  deletions: number;
}

/**
 * Per-file changes from `from` (or the empty tree) to `to`, renames as delete plus add.
 * `repoPath` is a bare repository or a work tree.
 */
export async function diffFiles(
  repoPath: string,
  from: string | undefined,
  to: string,
): Promise<FileChange[]> {
  const base = from ?? EMPTY_TREE;
  const diff = (format: string) =>
    runGit(['diff', '--no-renames', '--no-ext-diff', format, '-z', base, to, '--'], { cwd: repoPath });
  const [statuses, counts] = await Promise.all([diff('--name-status'), diff('--numstat')]);
  const lines = new Map<string, { additions: number; deletions: number }>();
  for (const entry of counts.split('\0')) {
    const match = /^(-|\d+)\t(-|\d+)\t(.*)$/s.exec(entry);
    if (!match) continue;
    // Binary files report `-`: they add no lines.
    lines.set(match[3]!, { additions: Number(match[1]) || 0, deletions: Number(match[2]) || 0 });
  }
  const parts = statuses.split('\0');
  const changes: FileChange[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const status = parts[i]!.charAt(0);
    const file = parts[i + 1]!;
    const kind = status === 'A' || status === 'D' ? status : 'M';
    changes.push({ status: kind, path: file, ...(lines.get(file) ?? { additions: 0, deletions: 0 }) });
  }
  return changes;
}

/** Creates `refs/tags/<tag>` at `commit` only if it does not exist yet; false when it did. */
export async function createTagIfAbsent(gitDir: string, tag: string, commit: string): Promise<boolean> {
  try {
    await runGit(['update-ref', `refs/tags/${tag}`, commit, ''], { gitDir });
    return true;
  } catch (error) {
    if (error instanceof GitError) return false;
    throw error;
  }
}
