import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'vitest';
import {
  type InspectionResult,
  type ReleaseInspector,
  setReleaseInspector,
} from '../../src/releases/inspection.js';

const exec = promisify(execFile);

/** A working copy with a committer identity, independent of the user's git configuration. */
export async function workRepo(): Promise<{ dir: string; git: (...args: string[]) => Promise<string> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'repo402-work-'));
  const env = {
    PATH: process.env.PATH,
    HOME: dir,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 'Creator',
    GIT_AUTHOR_EMAIL: 'creator@example.com',
    GIT_COMMITTER_NAME: 'Creator',
    GIT_COMMITTER_EMAIL: 'creator@example.com',
    GIT_AUTHOR_DATE: '2026-11-01T10:00:00Z',
    GIT_COMMITTER_DATE: '2026-11-01T10:00:00Z',
  };
  const git = async (...args: string[]) => (await exec('git', args, { cwd: dir, env })).stdout;
  await git('init', '-q', '-b', 'main');
  return { dir, git };
}

export async function commitFile(
  repo: { dir: string; git: (...args: string[]) => Promise<string> },
  file: string,
  content: string,
  message: string,
): Promise<string> {
  await exec('mkdir', ['-p', path.dirname(path.join(repo.dir, file))]);
  await writeFile(path.join(repo.dir, file), content);
  await repo.git('add', '-A');
  await repo.git('commit', '-q', '-m', message);
  return (await repo.git('rev-parse', 'HEAD')).trim();
}

/** `git` with `GIT_SSH_COMMAND` using only `keyFile`, as a creator would push; resolves with the result, never throws. */
export async function gitOverSsh(
  cwd: string,
  keyFile: string,
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = {
    PATH: process.env.PATH,
    HOME: cwd,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 'Creator',
    GIT_AUTHOR_EMAIL: 'creator@example.com',
    GIT_COMMITTER_NAME: 'Creator',
    GIT_COMMITTER_EMAIL: 'creator@example.com',
    GIT_SSH_COMMAND: `ssh -i ${keyFile} -o IdentitiesOnly=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR`,
  };
  try {
    const { stdout, stderr } = await exec('git', args, { cwd, env });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failure = error as { code: number; stdout: string; stderr: string };
    return { code: failure.code, stdout: failure.stdout, stderr: failure.stderr };
  }
}

/**
 * TEST FIXTURE, not an inspection: swaps in a stand-in inspector through the RELEASE_INSPECTOR
 * seam so publish and log tests choose each version's verdict without planting real secrets.
 * Returns a function that puts the real inspector back.
 */
export function installTestInspector(
  options: { failing?: string[]; derivativeOf?: Record<string, string> } = {},
): () => void {
  const inspector: ReleaseInspector = async (_ctx, input) => {
    const fail = options.failing?.includes(input.version) ?? false;
    const result: InspectionResult = {
      computed: { originality: { derivative_of: options.derivativeOf?.[input.version] ?? null } },
      scan: {
        verdict: fail ? 'fail' : 'pass',
        fixture: true,
        findings: fail ? [{ path: 'secret.txt', line: 1 }] : [],
      },
      verdict: fail ? 'fail' : 'pass',
      analyzerVersion: 'test-fixture-analyzer',
      scannerVersion: 'test-fixture-scanner',
      sbom: JSON.stringify({ fixture: true, version: input.version }),
      diffSummary: null,
    };
    return result;
  };
  const previous = setReleaseInspector(inspector);
  return () => {
    setReleaseInspector(previous);
  };
}

/** Polls `check` until it returns a value (real time: jobs run on pg-boss workers). */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) {
      expect.fail('condition not reached in time');
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
