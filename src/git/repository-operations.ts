import { access, constants, mkdir } from 'node:fs/promises';
import { z } from 'zod';
import type { Config } from '../config.js';
import type { Operation } from '../platform/control.js';
import { commitFileToBranch } from './commit-file.js';
import { publicHostKeys } from './host-keys.js';
import { createTagIfAbsent, listTags, resolveCommit } from './refs.js';
import { PATH_SAFE_NAME, provisionRepo, repoPath, reposRoot } from './repos.js';
import { runGit } from './run-git.js';
import { walkTree } from './tree.js';

/**
 * Everything a request handler does to a hosted listing's repository, as operations: run in this
 * process when it keeps the repositories, or sent to the git host (`GIT_HOST_URL`) when it keeps
 * none. Names travel as arguments and become paths only through `repoPath`, which refuses any
 * that could leave the repositories' directory.
 */

const name = z.string().max(64).regex(PATH_SAFE_NAME);
const repo = { owner: name, slug: name };

/** What the operations need of the process: only its configuration (where the repositories are). */
interface RepositoryContext {
  config: Config;
}

function operation<A, R>(
  args: z.ZodType<A>,
  run: (ctx: RepositoryContext, args: A) => Promise<R>,
): Operation<RepositoryContext, A, R> {
  return { args, run };
}

const gitDirOf = (ctx: RepositoryContext, args: { owner: string; slug: string }) =>
  repoPath(ctx.config, args.owner, args.slug);

export const repositoryOperations = {
  /**
   * The public halves of the SSH server's host keys: what every process tells creators to pin.
   * In the split topology only the git host has them (API processes generate none).
   */
  'ssh.host-keys': operation(z.object({}), (ctx) => publicHostKeys(ctx.config.dataDir)),
  /** Readiness: the repositories' directory is there and writable (a push could land). */
  'repos.ready': operation(z.object({}), async (ctx) => {
    const root = reposRoot(ctx.config);
    await mkdir(root, { recursive: true });
    await access(root, constants.W_OK);
    return null;
  }),
  /** A new hosted listing's bare repository (idempotent). */
  'repos.provision': operation(z.object(repo), async (ctx, { owner, slug }) => {
    await provisionRepo(ctx.config, owner, slug);
    return null;
  }),
  /** Marks a retired listing's repository archived, for an operator reading it on disk. */
  'repos.archive': operation(z.object(repo), async (ctx, args) => {
    await runGit(['config', 'repo402.archived', 'true'], { gitDir: gitDirOf(ctx, args) });
    return null;
  }),
  /** Commits one file to a branch as the service (the LICENSE a creator asked for). */
  'repos.commit-file': operation(
    z.object({
      ...repo,
      branch: z.string().min(1).max(255),
      path: z.string().min(1).max(255),
      content: z.string().max(256 * 1024),
      message: z.string().min(1).max(4096),
      at: z.iso.datetime(),
    }),
    (ctx, { branch, path, content, message, at, ...args }) =>
      commitFileToBranch(gitDirOf(ctx, args), { branch, path, content, message, at: new Date(at) }),
  ),
  'repos.tags': operation(z.object(repo), (ctx, args) => listTags(gitDirOf(ctx, args))),
  'repos.resolve-commit': operation(
    z.object({ ...repo, ref: z.string().min(1).max(1024) }),
    async (ctx, { ref, ...args }) => (await resolveCommit(gitDirOf(ctx, args), ref)) ?? null,
  ),
  /** `413 repo_too_large` when the commit's tree passes the caller's limits. */
  'repos.check-tree': operation(
    z.object({
      ...repo,
      commit: z.string().regex(/^[0-9a-f]{40}$/),
      limits: z.object({
        maxFiles: z.number().int().positive(),
        maxBytes: z.number().int().positive(),
        maxDepth: z.number().int().positive(),
      }),
    }),
    async (ctx, { commit, limits, ...args }) => {
      await walkTree(gitDirOf(ctx, args), commit, limits);
      return null;
    },
  ),
  'repos.create-tag': operation(
    z.object({ ...repo, tag: z.string().min(1).max(255), commit: z.string().regex(/^[0-9a-f]{40}$/) }),
    (ctx, { tag, commit, ...args }) => createTagIfAbsent(gitDirOf(ctx, args), tag, commit),
  ),
};

export type RepositoryOperations = typeof repositoryOperations;
type Name = keyof RepositoryOperations;
type ArgsOf<N extends Name> = z.input<RepositoryOperations[N]['args']>;
type ResultOf<N extends Name> = Awaited<ReturnType<RepositoryOperations[N]['run']>>;

/** Runs a repository operation wherever the repositories are. */
export interface Repositories {
  run<N extends Name>(name: N, args: ArgsOf<N>): Promise<ResultOf<N>>;
}
