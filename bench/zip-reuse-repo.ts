/**
 * The two releases `bench/zip-reuse.ts` zips: the 200 MB / 20,000-file repository of
 * `bench/release-cut.ts` (`generateLargeRepo`, tagged v1.0.0) and a second commit on it that
 * changes 10 of its text files, tagged v1.0.1. Generated once into the temp directory (its own
 * folder, so a concurrent run of `bench/release-cut.ts` is not disturbed) and reused.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { generateLargeRepo } from '../test/fixtures/large-repo.js';

const run = promisify(execFile);
const FILES = 20_000;
export const CHANGED_FILES = 10;

export async function benchRepo(): Promise<{ gitDir: string; first: string; second: string }> {
  const gitDir = path.join(os.tmpdir(), `repo402-zip-reuse-${FILES}.git`);
  if (!existsSync(path.join(gitDir, 'refs/tags/v1.0.1'))) {
    await rm(gitDir, { recursive: true, force: true });
    await run('git', ['init', '-q', '--bare', '-b', 'main', gitDir]);
    await generateLargeRepo(gitDir, { files: FILES, binaryFiles: 40, totalBytes: 199 * 1024 * 1024 });
    await changeFiles(gitDir);
  }
  const commit = async (tag: string) =>
    (await run('git', ['-C', gitDir, 'rev-parse', `${tag}^{commit}`])).stdout.trim();
  return { gitDir, first: await commit('v1.0.0'), second: await commit('v1.0.1') };
}

/** Appends a line to 10 text files spread over the tree, in one commit on `main`, tagged v1.0.1. */
async function changeFiles(gitDir: string): Promise<void> {
  const paths = (
    await run('git', ['-C', gitDir, 'ls-tree', '-r', '--name-only', 'v1.0.0'], { maxBuffer: 1 << 26 })
  ).stdout
    .split('\n')
    .filter((p) => p.endsWith('.ts'));
  const step = Math.floor(paths.length / CHANGED_FILES);
  const who = 'Creator <creator@example.com> 1793613600 +0000';
  const message = `${CHANGED_FILES} files changed\n`;
  let script = `commit refs/heads/main\ncommitter ${who}\ndata ${message.length}\n${message}from refs/heads/main^0\n`;
  for (let i = 0; i < CHANGED_FILES; i++) {
    const file = paths[i * step]!;
    const old = (
      await run('git', ['-C', gitDir, 'cat-file', 'blob', `v1.0.0:${file}`], { maxBuffer: 1 << 26 })
    ).stdout;
    const content = Buffer.from(`${old}// changed in 1.0.1\n`);
    script += `M 100644 inline ${file}\ndata ${content.length}\n${content}\n`;
  }
  script += `\ntag v1.0.1\nfrom refs/heads/main\ntagger ${who}\ndata 8\nRelease\n\n`;
  const child = spawn('git', ['-C', gitDir, 'fast-import', '--quiet'], {
    stdio: ['pipe', 'ignore', 'inherit'],
  });
  const done = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  child.stdin.end(script);
  if ((await done) !== 0) throw new Error('git fast-import of v1.0.1 failed');
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await benchRepo());
