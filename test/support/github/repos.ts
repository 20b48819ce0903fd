import { execFile } from 'node:child_process';
import { appendFile, cp, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { GIT_ENV, git, gitMaybe } from './git.js';

/** A repository on disk: the bare one the stand-in serves, and the clone a test's commits are made in. */
export interface RepoDirs {
  gitDir: string;
  workDir: string;
}

export interface Person {
  name: string;
  email: string;
}

/** Empty repositories made by git once per root and branch; each new repository is a copy. */
const templates = new Map<string, Promise<RepoDirs>>();

function template(root: string, branch: string): Promise<RepoDirs> {
  const key = `${root}\0${branch}`;
  let made = templates.get(key);
  if (!made) {
    made = (async () => {
      const dir = path.join(root, 'templates', branch.replace(/[^A-Za-z0-9._-]/g, '_'));
      const dirs = { gitDir: path.join(dir, 'bare.git'), workDir: path.join(dir, 'work') };
      // No template: the sample hooks and the rest would only make every copy slower.
      await git(root, ['init', '-q', '--template=', '--bare', '-b', branch, dirs.gitDir]);
      // GitHub lets a client fetch any reachable commit by id (`git fetch --depth 1 origin <sha>`).
      await git(dirs.gitDir, ['config', 'uploadpack.allowReachableSHA1InWant', 'true']);
      await git(root, ['init', '-q', '--template=', '-b', branch, dirs.workDir]);
      return dirs;
    })();
    templates.set(key, made);
  }
  return made;
}

/**
 * A bare repository and its work clone, copied from the empty template rather than made by git
 * each time: tests that need hundreds of repositories (a paginated installation) make them fast.
 */
export async function createRepoDirs(root: string, id: number, branch: string): Promise<RepoDirs> {
  const gitDir = path.join(root, 'git', `${id}.git`);
  const workDir = path.join(root, 'work', String(id));
  const empty = await template(root, branch);
  await Promise.all([
    cp(empty.gitDir, gitDir, { recursive: true }),
    cp(empty.workDir, workDir, { recursive: true }),
  ]);
  // What `git remote add origin <gitDir>` writes.
  await appendFile(
    path.join(workDir, '.git', 'config'),
    `[remote "origin"]\n\turl = ${gitDir}\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n`,
  );
  return { gitDir, workDir };
}

function identity(person: Person): Record<string, string> {
  return {
    GIT_AUTHOR_NAME: person.name,
    GIT_AUTHOR_EMAIL: person.email,
    GIT_COMMITTER_NAME: person.name,
    GIT_COMMITTER_EMAIL: person.email,
  };
}

/** Commits exactly `files` (the previous tree is replaced, not added to) on the work clone's branch. */
export async function commitFiles(
  dirs: RepoDirs,
  files: Record<string, string>,
  message: string,
  author: Person,
): Promise<{ commit: string; tree: string }> {
  const { workDir } = dirs;
  await git(workDir, ['rm', '-rq', '--ignore-unmatch', '.']);
  for (const [name, content] of Object.entries(files)) {
    const file = path.resolve(workDir, name);
    if (!file.startsWith(`${workDir}${path.sep}`) || name.split('/').includes('.git')) {
      throw new Error(`file name outside the work tree: ${name}`);
    }
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, content);
  }
  await git(workDir, ['add', '-A', '.']);
  await git(workDir, ['commit', '-q', '--allow-empty', '--no-verify', '-m', message], identity(author));
  const [commit, tree] = (await git(workDir, ['rev-parse', 'HEAD', 'HEAD^{tree}'])).trim().split('\n');
  return { commit: commit!, tree: tree! };
}

/**
 * Tags the work clone's HEAD and pushes the branch and the tag, as a creator's `git push --tags`
 * would; `force` re-points an existing tag.
 */
export async function pushTag(
  dirs: RepoDirs,
  branch: string,
  tag: string,
  options: { annotated?: string; force?: boolean; tagger: Person },
): Promise<void> {
  const { workDir } = dirs;
  const tagArgs = options.annotated === undefined ? [] : ['-a', '-m', options.annotated];
  await git(
    workDir,
    ['tag', ...(options.force ? ['-f'] : []), ...tagArgs, tag, 'HEAD'],
    identity(options.tagger),
  );
  await git(workDir, [
    'push',
    '-q',
    'origin',
    `HEAD:refs/heads/${branch}`,
    `${options.force ? '+' : ''}refs/tags/${tag}:refs/tags/${tag}`,
  ]);
}

export async function deleteTag(dirs: RepoDirs, tag: string): Promise<void> {
  await git(dirs.workDir, ['push', '-q', 'origin', `:refs/tags/${tag}`]);
  await git(dirs.workDir, ['tag', '-d', tag]);
}

/**
 * Names GitHub would resolve: branch, tag, full or abbreviated commit id. Anything else (`HEAD~1`,
 * `:/text`, `@{…}`) is refused before git sees it, so git's revision syntax never reaches a lookup.
 */
const PLAIN_REF = /^[A-Za-z0-9_][A-Za-z0-9._/-]*$/;

async function resolve(gitDir: string, ref: string, type: 'commit' | 'tree'): Promise<string | undefined> {
  if (!PLAIN_REF.test(ref) || ref.includes('..')) return undefined;
  const out = await gitMaybe(gitDir, [
    'rev-parse',
    '--verify',
    '--quiet',
    '--end-of-options',
    `${ref}^{${type}}`,
  ]);
  return out?.trim() || undefined;
}

export function resolveCommit(gitDir: string, ref: string): Promise<string | undefined> {
  return resolve(gitDir, ref, 'commit');
}

/** The commit a tag names (annotated tags dereferenced), or undefined when there is no such tag. */
export function tagCommit(gitDir: string, tag: string): Promise<string | undefined> {
  return resolve(gitDir, `refs/tags/${tag}`, 'commit');
}

/** GitHub lists tags by name, descending (not by date, not by version). */
export async function listTags(gitDir: string): Promise<Array<{ name: string; commit: string }>> {
  const out = await git(gitDir, [
    'for-each-ref',
    '--sort=-refname',
    '--format=%(refname:strip=2)%00%(objecttype)%00%(objectname)%00%(*objecttype)%00%(*objectname)',
    'refs/tags',
  ]);
  const tags: Array<{ name: string; commit: string }> = [];
  for (const line of out.split('\n').filter(Boolean)) {
    const [name, type, sha, peeledType, peeled] = line.split('\0') as [
      string,
      string,
      string,
      string,
      string,
    ];
    if (type === 'commit') tags.push({ name, commit: sha });
    else if (peeledType === 'commit') tags.push({ name, commit: peeled });
  }
  return tags;
}

export interface CommitInfo {
  sha: string;
  tree: string;
  parents: string[];
  author: Person & { date: string };
  committer: Person & { date: string };
  message: string;
}

export async function readCommit(gitDir: string, sha: string): Promise<CommitInfo> {
  const out = await git(gitDir, [
    'log',
    '-1',
    '--format=%H%x00%T%x00%P%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%B',
    sha,
  ]);
  const [hash, tree, parents, an, ae, ad, cn, ce, cd, message] = out.split('\0') as string[] as [
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  return {
    sha: hash,
    tree,
    parents: parents.split(' ').filter(Boolean),
    author: { name: an, email: ae, date: ad },
    committer: { name: cn, email: ce, date: cd },
    message: message.replace(/\n+$/, ''),
  };
}

export interface TreeEntry {
  path: string;
  mode: string;
  type: 'blob' | 'tree' | 'commit';
  sha: string;
  size?: number;
}

/** A tree (given by its id, or by a commit or ref that names one), flat or with every subtree. */
export async function readTree(
  gitDir: string,
  treeish: string,
  recursive: boolean,
): Promise<{ sha: string; entries: TreeEntry[] } | undefined> {
  const sha = await resolve(gitDir, treeish, 'tree');
  if (!sha) return undefined;
  const out = await git(gitDir, ['ls-tree', '-z', '-l', ...(recursive ? ['-r', '-t'] : []), sha]);
  const entries = out
    .split('\0')
    .filter(Boolean)
    .map((record): TreeEntry => {
      const tab = record.indexOf('\t');
      const [mode, type, object, size] = record.slice(0, tab).split(/ +/) as [
        string,
        TreeEntry['type'],
        string,
        string,
      ];
      const entry: TreeEntry = { path: record.slice(tab + 1), mode, type, sha: object };
      if (type === 'blob') entry.size = Number(size);
      return entry;
    });
  return { sha, entries };
}

/** What `size` means on GitHub: the repository's disk usage in KiB. */
export async function sizeKb(gitDir: string): Promise<number> {
  const out = await git(gitDir, ['count-objects', '-v']);
  const field = (name: string) => Number(out.match(new RegExp(`^${name}: (\\d+)$`, 'm'))?.[1] ?? 0);
  return field('size') + field('size-pack');
}

/** The paths a commit added, removed and modified (a push payload's `head_commit`). */
export async function changedPaths(
  gitDir: string,
  sha: string,
): Promise<{ added: string[]; removed: string[]; modified: string[] }> {
  const out = await git(gitDir, ['diff-tree', '-z', '-r', '--root', '--no-commit-id', '--name-status', sha]);
  const fields = out.split('\0').filter(Boolean);
  const changes = { added: [] as string[], removed: [] as string[], modified: [] as string[] };
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const status = fields[i]!;
    const file = fields[i + 1]!;
    if (status === 'A') changes.added.push(file);
    else if (status === 'D') changes.removed.push(file);
    else changes.modified.push(file);
  }
  return changes;
}

/** The branches whose tip is `sha`: a tag push's `base_ref` names one when there is one. */
export async function branchesAt(gitDir: string, sha: string): Promise<string[]> {
  const out = await git(gitDir, ['for-each-ref', `--points-at=${sha}`, '--format=%(refname)', 'refs/heads']);
  return out.split('\n').filter(Boolean);
}

/** A file's bytes and blob id at `ref`, or undefined when the ref or the file does not exist. */
export async function readFile(
  gitDir: string,
  ref: string,
  filePath: string,
): Promise<{ content: Buffer; sha: string } | undefined> {
  const commit = await resolve(gitDir, ref, 'commit');
  if (!commit || filePath.includes('..')) return undefined;
  const sha = (await gitMaybe(gitDir, ['rev-parse', '--verify', '--quiet', `${commit}:${filePath}`]))?.trim();
  if (!sha) return undefined;
  const { stdout } = await promisify(execFile)('git', ['cat-file', 'blob', sha], {
    cwd: gitDir,
    env: GIT_ENV,
    encoding: 'buffer',
  });
  return { content: stdout, sha };
}
