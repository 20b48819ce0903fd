import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';

/**
 * The one way this service runs git, on creator content or not: a fixed environment, a timeout
 * and an output cap on every call. Repositories hold whatever a creator pushed, so nothing about
 * a call may depend on the process's environment or the machine's git configuration.
 */

/** A git that failed; the message names the command (`args` has the rest, for the log). */
export class GitError extends Error {
  constructor(
    readonly args: string[],
    readonly exitCode: number | null,
    readonly stderr: string,
  ) {
    super(`git ${args[0]} failed (${exitCode ?? 'killed'}): ${stderr.trim().slice(0, 500)}`);
    this.name = 'GitError';
  }
}

/** Long enough for `git archive` of the largest tree the limits allow; a hung git never holds a job. */
export const GIT_TIMEOUT_MS = 120_000;
/** Output kept in memory by `runGit`; streaming callers (`spawnGit`) cap what they read themselves. */
export const GIT_MAX_OUTPUT_BYTES = 64 * 1024 * 1024;
const MAX_STDERR_CHARS = 16_384;

/**
 * The environment every git we run gets: no user or system configuration or attributes, no
 * replace refs (a pushed `refs/replace/` would make git read other objects than the ones named),
 * no prompts, and none of the process's GIT_* variables (GIT_DIR, GIT_OBJECT_DIRECTORY,
 * GIT_CONFIG_PARAMETERS… could point git at another repository or configure it).
 */
function gitEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: '/nonexistent',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_ATTR_NOSYSTEM: '1',
    GIT_NO_REPLACE_OBJECTS: '1',
    GIT_TERMINAL_PROMPT: '0',
    LC_ALL: 'C',
    ...extra,
  };
}

export interface GitOptions {
  /** The repository (`--git-dir`); omit for commands that take none. */
  gitDir?: string;
  /**
   * Or a directory git finds the repository in (`-C`): a work tree or a bare repository. Only that
   * directory: git does not look further up for one.
   */
  cwd?: string;
  input?: string;
  env?: Record<string, string>;
  /** Stop reading after this many bytes of output (the command is killed). */
  maxOutputBytes?: number;
  /** Past `maxOutputBytes`, resolve with the output read so far instead of failing. */
  truncate?: boolean;
  /** Kill the command after this long; defaults to GIT_TIMEOUT_MS. */
  timeoutMs?: number;
}

export interface GitProcess {
  stdin: Writable;
  stdout: Readable;
  /** Resolves when git exits 0; rejects with `GitError` on another exit, a kill or the timeout. */
  done: Promise<void>;
  /** Ends git early (the caller has read enough); `done` then resolves. */
  stop(): void;
}

/**
 * Starts git with its output as a stream, for callers that parse as they read and may stop early
 * (a tree walk that meets a limit) or feed input as they go (`cat-file --batch`).
 */
export function spawnGit(
  args: string[],
  options: Omit<GitOptions, 'input' | 'maxOutputBytes' | 'truncate'> = {},
): GitProcess {
  const fullArgs = [
    ...(options.cwd ? ['-C', options.cwd] : []),
    ...(options.gitDir ? [`--git-dir=${options.gitDir}`] : []),
    ...args,
  ];
  const ceiling: Record<string, string> = options.cwd
    ? { GIT_CEILING_DIRECTORIES: path.dirname(path.resolve(options.cwd)) }
    : {};
  const child: ChildProcessWithoutNullStreams = spawn('git', fullArgs, {
    env: gitEnv({ ...ceiling, ...options.env }),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  assertStarted(child, args);
  let stderr = '';
  let failure: string | undefined;
  let stopped = false;
  child.stderr.on('data', (chunk: Buffer) => {
    if (stderr.length < MAX_STDERR_CHARS) stderr += chunk.toString('utf8');
  });
  child.stdin.on('error', () => {});
  const timeoutMs = options.timeoutMs ?? GIT_TIMEOUT_MS;
  const timer = setTimeout(() => {
    failure = `timed out after ${timeoutMs} ms`;
    child.kill('SIGKILL');
  }, timeoutMs);
  // Errors name the command, never the repository's directory (it is a server path).
  const redact = (text: string) =>
    [options.gitDir, options.cwd].reduce(
      (shown: string, dir) => (dir ? shown.replaceAll(dir, '<repository>') : shown),
      text,
    );
  const done = new Promise<void>((resolve, reject) => {
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (stopped && failure === undefined) resolve();
      else if (code === 0 && failure === undefined) resolve();
      else reject(new GitError(args, code, redact(failure ?? stderr)));
    });
  });
  return {
    stdin: child.stdin,
    stdout: child.stdout,
    done,
    stop() {
      stopped = true;
      child.kill('SIGKILL');
    },
  };
}

/**
 * Starts `git-upload-pack` or `git-receive-pack` on `gitDir` for the SSH server, which pipes the
 * client's channel through it: the same fixed environment, the shared hooks directory, stderr as
 * a stream (the client reads git's messages). No timeout: a clone or push lasts as long as its
 * client keeps sending, and the SSH server's idle timeout ends a stalled one.
 */
export function spawnGitService(
  service: 'upload-pack' | 'receive-pack',
  gitDir: string,
  options: { hooksDir: string; env: Record<string, string> },
): ChildProcessWithoutNullStreams {
  const child = spawn('git', ['-c', `core.hooksPath=${options.hooksDir}`, service, gitDir], {
    env: gitEnv(options.env),
  });
  assertStarted(child, [service]);
  return child;
}

/**
 * A git the system would not start for want of file descriptors (EMFILE) has no pipes at all
 * (`stdin` and the rest are undefined) and reports its error on the next tick, where an error
 * nobody listens to ends the process. So the error is listened to at once, and the caller gets a
 * thrown `GitError` instead of a child to read from.
 */
function assertStarted(child: ChildProcessWithoutNullStreams, args: string[]): void {
  child.once('error', () => {});
  if (!child.stdin || !child.stdout || !child.stderr)
    throw new GitError(args, null, 'git could not start: the process has no file descriptors left');
}

/** Runs `git <args>` and resolves with its stdout; rejects with `GitError` on a non-zero exit. */
export async function runGit(args: string[], options: GitOptions = {}): Promise<string> {
  return (await runGitBytes(args, options)).toString('utf8');
}

/** `runGit` for output that is not text (or not known to be UTF-8). */
export async function runGitBytes(args: string[], options: GitOptions = {}): Promise<Buffer> {
  const git = spawnGit(args, options);
  const limit = options.maxOutputBytes ?? GIT_MAX_OUTPUT_BYTES;
  const out: Buffer[] = [];
  let outBytes = 0;
  git.stdin.end(options.input ?? '');
  const reading = (async () => {
    for await (const chunk of git.stdout as AsyncIterable<Buffer>) {
      outBytes += chunk.length;
      if (outBytes > limit) {
        git.stop();
        if (options.truncate) out.push(chunk.subarray(0, chunk.length - (outBytes - limit)));
        return;
      }
      out.push(chunk);
    }
  })();
  await Promise.all([git.done, reading]);
  if (outBytes > limit && !options.truncate) {
    throw new GitError(args, null, `output too large: more than ${limit} bytes`);
  }
  return Buffer.concat(out);
}
