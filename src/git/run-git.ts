import { spawn } from 'node:child_process';

export class GitError extends Error {
  constructor(
    readonly args: string[],
    readonly exitCode: number | null,
    readonly stderr: string,
  ) {
    super(`git ${args.join(' ')} exited with ${exitCode}: ${stderr.trim().slice(0, 500)}`);
    this.name = 'GitError';
  }
}

/**
 * The environment every git we run gets: no user or system configuration, no prompts, no
 * inherited GIT_* variables that could point it at another repository.
 */
export function gitEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: '/nonexistent',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    LC_ALL: 'C',
    ...extra,
  };
}

export interface GitOptions {
  /** The repository (`--git-dir`); omit for commands that take none. */
  gitDir?: string;
  input?: string;
  env?: Record<string, string>;
  /** Stop reading after this many bytes of output (the command is killed). */
  maxOutputBytes?: number;
}

/** Runs `git <args>` and resolves with its stdout; rejects with `GitError` on a non-zero exit. */
export function runGit(args: string[], options: GitOptions = {}): Promise<string> {
  const fullArgs = options.gitDir ? [`--git-dir=${options.gitDir}`, ...args] : args;
  return new Promise((resolve, reject) => {
    const child = spawn('git', fullArgs, { env: gitEnv(options.env), stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let outBytes = 0;
    let stderr = '';
    const limit = options.maxOutputBytes ?? 64 * 1024 * 1024;
    child.stdout.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > limit) child.kill('SIGKILL');
      else out.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 16_384) stderr += chunk.toString('utf8');
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0 && outBytes <= limit) resolve(Buffer.concat(out).toString('utf8'));
      else reject(new GitError(fullArgs, code, outBytes > limit ? 'output too large' : stderr));
    });
    child.stdin.on('error', () => {});
    child.stdin.end(options.input ?? '');
  });
}
