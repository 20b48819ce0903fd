import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { diffCommits } from '../../src/analysis/diff.js';
import { listTree, readBlobs } from '../../src/analysis/git.js';
import { loadConfig } from '../../src/config.js';
import { diffFiles, listTags } from '../../src/git/refs.js';
import { MAX_PUSH_BYTES, provisionRepo } from '../../src/git/repos.js';
import { GitError, runGit, spawnGit } from '../../src/git/run-git.js';
import { DEFAULT_TREE_LIMITS, walkTree } from '../../src/git/tree.js';
import { AppError } from '../../src/platform/errors.js';
import { buildRepo } from '../fixtures/git-repo.js';
import { commitTree, workRepo, writeHostileTree } from '../releases/support.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** A work repository holding `tree` as its HEAD commit. */
async function repoWith(shape: { width: number; depth: number }) {
  const work = await workRepo();
  cleanups.push(() => rm(work.dir, { recursive: true, force: true }));
  const tree = await writeHostileTree(path.join(work.dir, '.git'), shape);
  const commit = await commitTree(work, tree, 'hostile');
  return { dir: work.dir, commit };
}

async function refusal(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

describe('git on creator content', () => {
  it('reads only the repository it is given: the process’s git variables and user configuration change nothing', async () => {
    const repo = await buildRepo([{ 'a.txt': 'one\n' }, { 'a.txt': 'one\ntwo\n', 'b.txt': 'b\n' }]);
    const other = await buildRepo([{ 'other.txt': 'elsewhere\n' }]);
    cleanups.push(repo.cleanup, other.cleanup);
    // A user configuration that marks every file binary, so line counts would read as zero.
    const home = await mkdtemp(path.join(os.tmpdir(), 'repo402-home-'));
    cleanups.push(() => rm(home, { recursive: true, force: true }));
    await writeFile(path.join(home, 'attributes'), '* -diff\n');
    await writeFile(path.join(home, '.gitconfig'), `[core]\n\tattributesFile = ${home}/attributes\n`);
    const saved = { ...process.env };
    cleanups.push(async () => {
      process.env = saved;
    });
    Object.assign(process.env, {
      HOME: home,
      GIT_CONFIG_GLOBAL: path.join(home, '.gitconfig'),
      GIT_DIR: path.join(other.dir, '.git'),
      GIT_OBJECT_DIRECTORY: path.join(other.dir, '.git', 'objects'),
    });

    const [first, second] = repo.shas as [string, string];
    const entries = await listTree(repo.dir, second);
    expect(entries.map((entry) => entry.path)).toEqual(['a.txt', 'b.txt']);
    const contents: string[] = [];
    await readBlobs(
      repo.dir,
      entries.map((entry) => entry.sha),
      (_index, content) => {
        contents.push(content.toString());
      },
    );
    expect(contents).toEqual(['one\ntwo\n', 'b\n']);
    expect(await diffCommits(repo.dir, first, second)).toEqual({
      added: ['b.txt'],
      changed: ['a.txt'],
      removed: [],
      additions: 2,
      deletions: 0,
    });
    const changes = await diffFiles(path.join(repo.dir, '.git'), first, second);
    expect(changes.map((change) => change.additions)).toEqual([1, 1]);
  });

  it('stops walking a tree of 10 entries nested 10 levels at the file limit: repo_too_large, no server path', async () => {
    const { dir, commit } = await repoWith({ width: 10, depth: 10 });
    const started = Date.now();
    const error = await refusal(listTree(dir, commit));
    // 10^10 files exist in name only: the walk must give up long before listing them.
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(error.code).toBe('repo_too_large');
    expect(error.details).toMatchObject({ limit: 'files', max_files: 20_000 });
    expect(error.message).not.toContain(dir);
    expect(JSON.stringify(error.details)).not.toContain(dir);
  });

  it('stops walking a tree 30,000 levels deep at the depth limit', { timeout: 120_000 }, async () => {
    const { dir, commit } = await repoWith({ width: 1, depth: 30_000 });
    const error = await refusal(walkTree(path.join(dir, '.git'), commit, DEFAULT_TREE_LIMITS));
    expect(error.code).toBe('repo_too_large');
    expect(error.details).toMatchObject({ limit: 'depth', max_depth: 64 });
    expect(error.message).not.toContain(dir);
  });

  it('accepts a tree exactly at the depth limit and refuses one level more', async () => {
    const limits = { ...DEFAULT_TREE_LIMITS, maxDepth: 5 };
    const within = await repoWith({ width: 1, depth: 5 });
    const entries = await walkTree(path.join(within.dir, '.git'), within.commit, limits);
    expect(entries).toEqual([
      expect.objectContaining({ path: 'd0/d0/d0/d0/d0/f0', size: 2, mode: '100644' }),
    ]);
    const over = await repoWith({ width: 1, depth: 6 });
    const error = await refusal(walkTree(path.join(over.dir, '.git'), over.commit, limits));
    expect(error.details).toMatchObject({ limit: 'depth', max_depth: 5 });
  });

  it('refuses a tree over the byte limit', async () => {
    const repo = await buildRepo([{ 'big.bin': Buffer.alloc(4096, 1), 'small.txt': 'x\n' }]);
    cleanups.push(repo.cleanup);
    const error = await refusal(
      walkTree(path.join(repo.dir, '.git'), repo.shas[0]!, { ...DEFAULT_TREE_LIMITS, maxBytes: 4096 }),
    );
    expect(error.details).toMatchObject({ limit: 'bytes', max_bytes: 4096 });
  });

  it('peels a tag of an annotated tag to its commit', async () => {
    const work = await workRepo();
    cleanups.push(() => rm(work.dir, { recursive: true, force: true }));
    await work.git('commit', '-q', '--allow-empty', '-m', 'One');
    const commit = (await work.git('rev-parse', 'HEAD')).trim();
    await work.git('tag', '-a', 'inner', '-m', 'inner');
    await work.git('tag', '-a', 'v1.0.0', '-m', 'outer', 'inner');
    await work.git('tag', '-a', 'v1.1.0', '-m', 'outermost', 'v1.0.0');
    const tags = await listTags(path.join(work.dir, '.git'));
    expect(tags).toEqual(
      expect.arrayContaining([
        { name: 'v1.0.0', commit, annotated: true },
        { name: 'v1.1.0', commit, annotated: true },
      ]),
    );
    // A tag of a tree is no release: it peels to no commit.
    const tree = (await work.git('rev-parse', 'HEAD^{tree}')).trim();
    await work.git('tag', '-a', 'v2.0.0', '-m', 'a tree', tree);
    expect((await listTags(path.join(work.dir, '.git'))).map((tag) => tag.name)).not.toContain('v2.0.0');
  });

  it('kills a git that runs past its timeout, and one whose output passes its cap', async () => {
    const work = await workRepo();
    cleanups.push(() => rm(work.dir, { recursive: true, force: true }));
    // cat-file --batch waits for input that never comes.
    const hung = spawnGit(['cat-file', '--batch'], { gitDir: path.join(work.dir, '.git'), timeoutMs: 300 });
    await expect(hung.done).rejects.toThrow(GitError);
    await expect(hung.done).rejects.toThrow(/timed out/);
    await work.git('commit', '-q', '--allow-empty', '-m', 'x'.repeat(5000));
    await expect(
      runGit(['log', '--format=%B'], { gitDir: path.join(work.dir, '.git'), maxOutputBytes: 1000 }),
    ).rejects.toThrow(/output/);
    // Nothing a git error says names the repository's directory.
    const missing = await runGit(['rev-parse', 'HEAD'], { gitDir: path.join(work.dir, 'nope') }).catch(
      (error: GitError) => error,
    );
    expect(missing).toBeInstanceOf(GitError);
    expect((missing as GitError).message).not.toContain(work.dir);
  });
});

describe('a hosted repository as provisioned', () => {
  it('is bare on main, refuses non-fast-forward pushes, checks objects, caps a push, and has no sample hooks; provisioning again changes nothing', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'repo402-provision-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const config = loadConfig({ DATA_DIR: dataDir });
    const dir = await provisionRepo(config, 'alice', 'tools');
    const setting = async (key: string) => (await runGit(['config', '--get', key], { gitDir: dir })).trim();
    const expected = {
      'core.bare': 'true',
      'receive.denyNonFastForwards': 'true',
      'receive.denyDeletes': 'false',
      'receive.fsckObjects': 'true',
      'receive.maxInputSize': String(MAX_PUSH_BYTES),
      'core.logAllRefUpdates': 'true',
    };
    const read = async () =>
      Object.fromEntries(
        await Promise.all(Object.keys(expected).map(async (key) => [key, await setting(key)])),
      );
    expect(await read()).toEqual(expected);
    expect((await runGit(['symbolic-ref', 'HEAD'], { gitDir: dir })).trim()).toBe('refs/heads/main');
    expect((await readdir(dir)).sort()).toEqual(['HEAD', 'config', 'objects', 'refs']);
    await provisionRepo(config, 'alice', 'tools');
    expect(await read()).toEqual(expected);
  });
});
