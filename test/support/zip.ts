import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, realpath, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);

/** Extracts a zip with Info-ZIP `unzip`, a real extractor that creates the symlinks it finds; returns the folder. */
export async function unzipped(zip: Buffer): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'repo402-unzip-'));
  await writeFile(path.join(dir, 'a.zip'), zip);
  const into = path.join(dir, 'out');
  await mkdir(into);
  await exec('unzip', ['-q', path.join(dir, 'a.zip'), '-d', into]);
  return into;
}

/** Every symlink under `dir` (links are not followed), with where the OS resolves it (null when it dangles). */
export async function linksUnder(
  dir: string,
  base = dir,
): Promise<Array<{ link: string; resolved: string | null }>> {
  const found: Array<{ link: string; resolved: string | null }> = [];
  for (const item of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, item.name);
    if (item.isSymbolicLink())
      found.push({ link: path.relative(base, full), resolved: await realpath(full).catch(() => null) });
    else if (item.isDirectory()) found.push(...(await linksUnder(full, base)));
  }
  return found;
}

/** True when `resolved` is `root` or inside it. */
export const isInside = (root: string, resolved: string | null) =>
  resolved !== null && (resolved === root || resolved.startsWith(`${root}${path.sep}`));
