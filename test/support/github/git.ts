import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * The environment of every git the stand-in runs (its own commits and `git http-backend`): no
 * user or system configuration, so a developer's settings never change what it serves, and no
 * GIT_* variable of the test process (GIT_DIR…) leaks in.
 */
export const GIT_ENV: Record<string, string> = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: '/nonexistent',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_TERMINAL_PROMPT: '0',
  LC_ALL: 'C',
};

export async function git(cwd: string, args: string[], env: Record<string, string> = {}): Promise<string> {
  const { stdout } = await run('git', args, {
    cwd,
    env: { ...GIT_ENV, ...env },
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  return stdout;
}

/** Like `git`, but a non-zero exit is an answer (a ref that does not resolve), not a failure. */
export async function gitMaybe(cwd: string, args: string[]): Promise<string | undefined> {
  try {
    return await git(cwd, args);
  } catch (error) {
    if (typeof (error as { code?: unknown }).code === 'number') return undefined;
    throw error;
  }
}
