import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { commitChangedFiles, generateLargeRepo } from '../test/fixtures/large-repo.js';

const run = promisify(execFile);
const FILES = 20_000;

/**
 * The largest repository the limits allow (20,000 files, 199 MB), as a bare repository generated
 * once and kept in the temp directory: `v1.0.0`, and `v1.0.1` changing 10 of its code files.
 */
export async function largeBenchRepo(): Promise<{ gitDir: string; commit: string; next: string }> {
  const gitDir = path.join(os.tmpdir(), `repo402-bench-${FILES}.git`);
  const rev = async (ref: string) =>
    (
      await run('git', ['-C', gitDir, 'rev-parse', '--verify', '-q', `${ref}^{commit}`]).catch(
        () => undefined,
      )
    )?.stdout.trim();
  if (!existsSync(path.join(gitDir, 'HEAD')) || !(await rev('v1.0.0'))) {
    await rm(gitDir, { recursive: true, force: true });
    await run('git', ['init', '-q', '--bare', '-b', 'main', gitDir]);
    await generateLargeRepo(gitDir, { files: FILES, binaryFiles: 40, totalBytes: 199 * 1024 * 1024 });
  }
  if (!(await rev('v1.0.1'))) await commitChangedFiles(gitDir, 10, 'v1.0.1');
  return { gitDir, commit: (await rev('v1.0.0'))!, next: (await rev('v1.0.1'))! };
}
