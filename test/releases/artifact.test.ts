import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, readlink, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import yauzl from 'yauzl';
import { buildArtifact } from '../../src/releases/cut/artifact.js';
import { buildRepo, type Tree } from '../fixtures/git-repo.js';
import { isInside, linksUnder, unzipped } from '../support/zip.js';

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

async function tmp(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'repo402-artifact-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

interface ZipEntry {
  name: string;
  mode: number;
  method: number;
  dosDate: number;
  dosTime: number;
  extraFields: number;
  content: Buffer;
}

/** Every entry as a real reader sees it: name, Unix mode from the external attributes, bytes. */
function readZip(file: string): Promise<ZipEntry[]> {
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true }, (error, zip) => {
      if (error) return reject(error);
      const entries: ZipEntry[] = [];
      zip.on('error', reject);
      zip.on('end', () => resolve(entries));
      zip.on('entry', (entry: yauzl.Entry) => {
        zip.openReadStream(entry, async (streamError, stream) => {
          if (streamError) return reject(streamError);
          const chunks: Buffer[] = [];
          for await (const chunk of stream) chunks.push(chunk as Buffer);
          entries.push({
            name: entry.fileName,
            mode: entry.externalFileAttributes >>> 16,
            method: entry.compressionMethod,
            dosDate: entry.lastModFileDate,
            dosTime: entry.lastModFileTime,
            extraFields: entry.extraFields.length,
            content: Buffer.concat(chunks),
          });
          zip.readEntry();
        });
      });
      zip.readEntry();
    });
  });
}

async function artifactOf(tree: Tree, prefix = 'tools/') {
  const repo = await buildRepo([tree]);
  cleanups.push(repo.cleanup);
  const outFile = path.join(await tmp(), 'a.zip');
  const built = await buildArtifact({
    gitDir: path.join(repo.dir, '.git'),
    commit: repo.shas[0]!,
    prefix,
    outFile,
  });
  return { ...built, outFile, repo };
}

describe('the release zip', () => {
  it('holds every file under the top folder, sorted, one fixed time, modes kept, deflated; sha256 and size are the bytes', {
    timeout: 60_000,
  }, async () => {
    const binary = Buffer.from([0, 1, 2, 3, 255, 0, 7]);
    const { sha256, sizeBytes, outFile } = await artifactOf({
      'src/index.ts': 'export const x = 1;\n',
      'bin/run.sh': { content: '#!/bin/sh\necho run\n', mode: '100755' },
      'README.md': '# Tools\n',
      'assets/logo.bin': binary,
      'docs/latest': { symlink: 'guide.md' },
      'docs/guide.md': 'Guide\n',
      'a b/é.txt': 'unicode name\n',
    });
    const bytes = await readFile(outFile);
    expect(sizeBytes).toBe(bytes.length);
    expect(sha256).toBe(createHash('sha256').update(bytes).digest('hex'));

    const entries = await readZip(outFile);
    expect(entries.map((e) => e.name)).toEqual([
      'tools/README.md',
      'tools/a b/é.txt',
      'tools/assets/logo.bin',
      'tools/bin/run.sh',
      'tools/docs/guide.md',
      'tools/docs/latest',
      'tools/src/index.ts',
    ]);
    const byName = Object.fromEntries(entries.map((e) => [e.name, e]));
    expect(byName['tools/bin/run.sh']!.mode).toBe(0o100755);
    expect(byName['tools/src/index.ts']!.mode).toBe(0o100644);
    expect(byName['tools/src/index.ts']!.content.toString()).toBe('export const x = 1;\n');
    expect(byName['tools/assets/logo.bin']!.content.equals(binary)).toBe(true);
    // A link inside the tree stays a link.
    expect(byName['tools/docs/latest']!.mode).toBe(0o120777);
    expect(byName['tools/docs/latest']!.content.toString()).toBe('guide.md');
    for (const entry of entries) {
      // 1980-01-01 00:00:00 as a DOS date (day 1, month 1, year 0) and time; no extended time field.
      expect([entry.dosDate, entry.dosTime, entry.extraFields]).toEqual([(1 << 5) | 1, 0, 0]);
      expect(entry.method).toBe(entry.mode === 0o120777 ? 0 : 8);
    }
  });

  it('gives identical bytes for identical trees, whenever and however they were committed', {
    timeout: 60_000,
  }, async () => {
    const tree: Tree = { 'a.txt': 'a\n', 'dir/b.txt': 'b\n', 'dir/c': { symlink: '../a.txt' } };
    const first = await artifactOf(tree, 'same/');
    const again = await buildRepo([{ 'other.txt': 'first commit\n' }, tree]);
    cleanups.push(again.cleanup);
    const outFile = path.join(await tmp(), 'b.zip');
    const second = await buildArtifact({
      gitDir: path.join(again.dir, '.git'),
      commit: again.shas[1]!,
      prefix: 'same/',
      outFile,
    });
    expect(second.sha256).toBe(first.sha256);
    expect((await readFile(outFile)).equals(await readFile(first.outFile))).toBe(true);
  });

  it('never stores a link that leaves the archive; unzip extracts no link pointing outside', {
    timeout: 60_000,
  }, async () => {
    const { outFile } = await artifactOf({
      'README.md': '# Hostile\n',
      'docs/guide.md': 'Guide\n',
      passwd: { symlink: '/etc/passwd' },
      shadow: { symlink: '../../../../etc/shadow' },
      root: { symlink: '/' },
      x: { symlink: '.' },
      y: { symlink: 'x/..' },
      'z/through': { symlink: '../y/etc' },
      loop1: { symlink: 'loop2' },
      loop2: { symlink: 'loop1' },
      latest: { symlink: 'docs' },
    });
    const entries = Object.fromEntries((await readZip(outFile)).map((e) => [e.name, e]));
    const asFile = (name: string, target: string) =>
      expect([entries[`tools/${name}`]!.mode, entries[`tools/${name}`]!.content.toString()]).toEqual([
        0o100644,
        target,
      ]);
    asFile('passwd', '/etc/passwd');
    asFile('shadow', '../../../../etc/shadow');
    asFile('root', '/');
    asFile('y', 'x/..');
    asFile('z/through', '../y/etc');
    asFile('loop1', 'loop2');
    expect(entries['tools/x']!.mode).toBe(0o120777);
    expect(entries['tools/latest']!.mode).toBe(0o120777);

    // A real extractor: Info-ZIP unzip creates the links it finds; none may resolve outside.
    const into = await unzipped(await readFile(outFile));
    const top = await realpath(path.join(into, 'tools'));
    const links = await linksUnder(into);
    expect(links.map((l) => l.link).sort()).toEqual(['tools/latest', 'tools/x']);
    for (const { resolved } of links) expect(isInside(top, resolved)).toBe(true);
    expect(await readlink(path.join(into, 'tools/latest'))).toBe('docs');
    expect(await readFile(path.join(into, 'tools/passwd'), 'utf8')).toBe('/etc/passwd');
  });

  it('stores names an extractor could split or that hold control characters percent-encoded', {
    timeout: 60_000,
  }, async () => {
    const { outFile } = await artifactOf({
      'back\\..\\..\\win-evil.bat': 'echo evil\n',
      'notes\nforged.txt': 'x\n',
      'invoice\u202egnp.exe': 'y\n',
    });
    const names = (await readZip(outFile)).map((e) => e.name);
    expect(names).toEqual([
      'tools/back%5C..%5C..%5Cwin-evil.bat',
      'tools/invoice\u202egnp.exe',
      'tools/notes%0Aforged.txt',
    ]);
    const into = await unzipped(await readFile(outFile));
    expect((await readdir(path.join(into, 'tools'))).sort()).toEqual([
      'back%5C..%5C..%5Cwin-evil.bat',
      'invoice\u202egnp.exe',
      'notes%0Aforged.txt',
    ]);
  });

  it('stops a build that runs past its time limit', { timeout: 60_000 }, async () => {
    const repo = await buildRepo([{ 'a.txt': 'a\n', 'b.bin': Buffer.alloc(4 * 1024 * 1024, 7) }]);
    cleanups.push(repo.cleanup);
    const outFile = path.join(await tmp(), 'slow.zip');
    await expect(
      buildArtifact(
        { gitDir: path.join(repo.dir, '.git'), commit: repo.shas[0]!, prefix: 'x/', outFile },
        { timeoutMs: 20 },
      ),
    ).rejects.toThrow('building the zip failed: stopped after 0 s');
  });

  it('refuses an unknown commit without leaving a half-written answer', { timeout: 60_000 }, async () => {
    const repo = await buildRepo([{ 'a.txt': 'a\n' }]);
    cleanups.push(repo.cleanup);
    const outFile = path.join(await tmp(), 'missing.zip');
    await expect(
      buildArtifact({ gitDir: path.join(repo.dir, '.git'), commit: 'f'.repeat(40), prefix: 'x/', outFile }),
    ).rejects.toThrow(/git ls-tree failed/);
  });
});
