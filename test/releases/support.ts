import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { deflateSync } from 'node:zlib';
import { expect } from 'vitest';
import { diffFiles } from '../../src/git/refs.js';
import type { InspectionResult, ReleaseInspector } from '../../src/releases/inspection/inspector.js';
import { registerCreator } from '../identity/support.js';
import { createHostedListing, type SshKey } from '../listings/support.js';
import type { TestApp } from '../support/app.js';

const exec = promisify(execFile);

/**
 * A working copy with a committer identity, independent of the user's git configuration. `bare`
 * for hostile trees: in a work tree, git's own commands look up attributes at every path, and
 * crash or print a warning per path on a tree 30,000 directories deep.
 */
/** A fresh repository on `branch` (default `main`; `master` is what a plain `git init` often makes). */
export async function workRepo(
  options: { bare?: boolean; branch?: string } = {},
): Promise<{ dir: string; git: (...args: string[]) => Promise<string> }> {
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
  await git('init', '-q', ...(options.bare ? ['--bare'] : []), '-b', options.branch ?? 'main');
  return { dir, git };
}

export async function commitFile(
  repo: { dir: string; git: (...args: string[]) => Promise<string> },
  file: string,
  content: string,
  message: string,
): Promise<string> {
  await mkdir(path.dirname(path.join(repo.dir, file)), { recursive: true });
  await writeFile(path.join(repo.dir, file), content);
  await repo.git('add', '-A');
  await repo.git('commit', '-q', '-m', message);
  return (await repo.git('rev-parse', 'HEAD')).trim();
}

/**
 * `git` with `GIT_SSH_COMMAND` using only `keyFile`, as a creator would push (from `bindAddress`
 * when given: any 127.x address is this machine); resolves with the result, never throws.
 */
export async function gitOverSsh(
  cwd: string,
  keyFile: string,
  args: string[],
  options: { bindAddress?: string } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = {
    PATH: process.env.PATH,
    HOME: cwd,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 'Creator',
    GIT_AUTHOR_EMAIL: 'creator@example.com',
    GIT_COMMITTER_NAME: 'Creator',
    GIT_COMMITTER_EMAIL: 'creator@example.com',
    GIT_SSH_COMMAND: `ssh -i ${keyFile} -o IdentitiesOnly=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR${
      options.bindAddress ? ` -o BindAddress=${options.bindAddress}` : ''
    }`,
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
 * TEST FIXTURE, not an inspection: a stand-in inspector for the context (`t.ctx.inspectRelease =
 * testInspector(…)`), so publish and log tests choose each version's verdict without planting
 * real secrets. Its diff summary counts git's changes since the previous release, with each
 * top-level folder as a component.
 */
export function testInspector(
  options: { failing?: string[]; derivativeOf?: Record<string, string> } = {},
): ReleaseInspector {
  return async (input) => {
    const fail = options.failing?.includes(input.version) ?? false;
    const result: InspectionResult = {
      computed: { originality: { derivative_of: options.derivativeOf?.[input.version] ?? null } },
      treeParts: [],
      scan: {
        verdict: fail ? 'fail' : 'pass',
        fixture: true,
        findings: fail ? [{ path: 'secret.txt', line: 1 }] : [],
      },
      verdict: fail ? 'fail' : 'pass',
      analyzerVersion: 'test-fixture-analyzer',
      scannerVersion: 'test-fixture-scanner',
      sbom: JSON.stringify({ fixture: true, version: input.version }),
      diffSummary: summariseChanges(
        await diffFiles(input.repoPath, input.previous.at(-1)?.commitSha, input.commit),
      ),
    };
    return result;
  };
}

function summariseChanges(changes: Awaited<ReturnType<typeof diffFiles>>) {
  const components = new Set(
    changes.map((change) => (change.path.includes('/') ? change.path.split('/')[0]! : '.')),
  );
  return {
    files_added: changes.filter((change) => change.status === 'A').length,
    files_changed: changes.filter((change) => change.status === 'M').length,
    files_removed: changes.filter((change) => change.status === 'D').length,
    additions: changes.reduce((sum, change) => sum + change.additions, 0),
    deletions: changes.reduce((sum, change) => sum + change.deletions, 0),
    components_touched: [...components].sort(),
  };
}

/**
 * A new creator's hosted listing with `key` as its deploy key, its remote on the SSH server at
 * `sshPort`, and a work tree with `v1.0.0` tagged, not pushed yet.
 */
export async function taggedHostedListing(t: TestApp, sshPort: number, key: SshKey) {
  const creator = await registerCreator(t);
  const listing = await createHostedListing(t, creator.apiKey, key.publicKey);
  const remote = `ssh://git@127.0.0.1:${sshPort}/${listing.owner}/${listing.slug}.git`;
  const work = await workRepo();
  await commitFile(work, 'README.md', '# Tool\n', 'First');
  await work.git('tag', 'v1.0.0');
  return { creator, listing, remote, work };
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

/**
 * Writes a hostile tree straight into `gitDir`'s object store, as one pack (git's own tools would
 * need one process per tree): `depth` levels of directories, each holding `width` entries that all
 * point at the level below, over a bottom tree of `width` one-line files. Width 10 and depth 10
 * name 10^10 files with 12 objects; width 1 and depth 30,000 is a path 30,000 directories deep.
 * Returns the top tree's id.
 */
export async function writeHostileTree(
  gitDir: string,
  shape: { width: number; depth: number },
): Promise<string> {
  const objects: Buffer[] = [];
  const add = (type: 'tree' | 'blob', body: Buffer) => {
    // Pack entry: type and size in a little-endian varint header, then the zlib stream.
    let size = body.length;
    const header = [((type === 'tree' ? 2 : 3) << 4) | (size & 0x0f)];
    size >>= 4;
    while (size > 0) {
      header[header.length - 1]! |= 0x80;
      header.push(size & 0x7f);
      size >>= 7;
    }
    objects.push(Buffer.from(header), deflateSync(body));
    return createHash('sha1').update(`${type} ${body.length}\0`).update(body).digest();
  };
  // A tree's entries are sorted by name (fsck refuses others): numbers are padded to one width.
  const digits = String(shape.width - 1).length;
  const entries = (mode: string, name: (i: number) => string, id: Buffer) =>
    Buffer.concat(
      Array.from({ length: shape.width }, (_, i) => Buffer.concat([Buffer.from(`${mode} ${name(i)}\0`), id])),
    );
  const blob = add('blob', Buffer.from('x\n'));
  let tree = add(
    'tree',
    entries('100644', (i) => `f${String(i).padStart(digits, '0')}`, blob),
  );
  for (let level = 0; level < shape.depth; level += 1)
    tree = add(
      'tree',
      entries('40000', (i) => `d${String(i).padStart(digits, '0')}`, tree),
    );
  const header = Buffer.alloc(12);
  header.write('PACK', 0);
  header.writeUInt32BE(2, 4);
  header.writeUInt32BE(shape.depth + 2, 8);
  const body = Buffer.concat([header, ...objects]);
  const pack = Buffer.concat([body, createHash('sha1').update(body).digest()]);
  await new Promise<void>((resolve, reject) => {
    const child = spawn('git', ['--git-dir', gitDir, 'index-pack', '--stdin'], {
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`index-pack: ${stderr}`))));
    child.stdin.end(pack);
  });
  return tree.toString('hex');
}

/** Commits `tree` on top of HEAD in a repository made by `workRepo`, moving its branch. */
export async function commitTree(
  repo: { dir: string; git: (...args: string[]) => Promise<string> },
  tree: string,
  message: string,
): Promise<string> {
  const parent = (await repo.git('rev-parse', '--verify', '--quiet', 'HEAD').catch(() => '')).trim();
  const commit = (
    await repo.git('commit-tree', tree, ...(parent ? ['-p', parent] : []), '-m', message)
  ).trim();
  await repo.git('update-ref', 'HEAD', commit);
  return commit;
}
