import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { writeArtifact } from '../../src/releases/cut/artifact.js';

const run = promisify(execFile);

/** One repository per fixture listing; each release commits its own tree on top of the last. */
export class FixtureRepo {
  private constructor(readonly dir: string) {}

  static async create(): Promise<FixtureRepo> {
    const repo = new FixtureRepo(await mkdtemp(path.join(os.tmpdir(), 'repo402-fixture-')));
    await repo.git('init', '-q', '-b', 'main');
    return repo;
  }

  git(...args: string[]) {
    return run('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd: this.dir });
  }

  /** Commits exactly `files` and zips the commit as a release cut does (in this thread). */
  async commit(slug: string, version: string, files: Record<string, string>) {
    await this.git('rm', '-rq', '--ignore-unmatch', '.');
    for (const [name, content] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(this.dir, name)), { recursive: true });
      await writeFile(path.join(this.dir, name), content);
    }
    await this.git('add', '.');
    await this.git('commit', '-q', '--allow-empty', '-m', version);
    const commit = (await this.git('rev-parse', 'HEAD')).stdout.trim();
    const zipPath = `${this.dir}.${version}.zip`;
    await writeArtifact({
      gitDir: path.join(this.dir, '.git'),
      commit,
      prefix: `${slug}/`,
      outFile: zipPath,
    });
    const zip = await readFile(zipPath);
    await rm(zipPath, { force: true });
    return { zip, commit };
  }

  remove() {
    return rm(this.dir, { recursive: true, force: true });
  }
}
