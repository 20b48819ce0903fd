import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, readlink, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { crc32 } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import yauzl from 'yauzl';
import { localBlobStore } from '../../src/platform/blobs/local.js';
import { buildArtifact, type EarlierZip } from '../../src/releases/cut/artifact.js';
import { DEFLATER_RECORD } from '../../src/releases/cut/deflater.js';
import { fetchEarlierZip } from '../../src/releases/cut/earlier-zip.js';
import { STORED, ZipFileWriter } from '../../src/releases/cut/zip-writer.js';
import { buildRepo, type Tree } from '../fixtures/git-repo.js';
import { isInside, linksUnder, unzipped } from '../support/zip.js';

const exec = promisify(execFile);
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
    // The archive comment names the deflater, which a later release checks before reusing entries.
    expect(bytes.subarray(-DEFLATER_RECORD.length).toString()).toBe(DEFLATER_RECORD);
    await expectSoundToOtherReaders(outFile);
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

/** Info-ZIP's test of every entry and Python's zipfile read the zip without a complaint; the entries Python counts. */
async function expectSoundToOtherReaders(file: string): Promise<number> {
  await exec('unzip', ['-tqq', file]);
  const python = await exec('python3', [
    '-c',
    'import sys, zipfile\nwith zipfile.ZipFile(sys.argv[1]) as z: print(z.testzip(), len(z.infolist()))',
    file,
  ]);
  expect(python.stdout).toMatch(/^None \d+\n$/);
  return Number(python.stdout.split(' ')[1]);
}

describe('a release zip reusing an earlier release’s', () => {
  const keep = 'export const keep = 1;\n'.repeat(400);
  const moved = 'export const moved = 2;\n'.repeat(300);
  const script = '#!/bin/sh\necho run\n'.repeat(50);
  const binary = Buffer.from(Array.from({ length: 50_000 }, (_, i) => (i * 7919) % 251));
  const first: Tree = {
    'README.md': '# Tools 1.0.0\n',
    'src/keep.ts': keep,
    'src/old-name.ts': moved,
    'run.sh': script,
    'docs/guide.md': 'Guide\n'.repeat(100),
    'docs/latest': { symlink: 'guide.md' },
    'assets/data.bin': binary,
  };
  const second: Tree = {
    'README.md': '# Tools 1.1.0, changed\n',
    'src/keep.ts': keep,
    'src/new-name.ts': moved,
    'src/added.ts': 'export const added = 3;\n',
    'run.sh': script,
    'docs/guide.md': 'Guide\n'.repeat(100),
    // (The fixture writes each link anew, so the second tree's links have names of their own.)
    'docs/current': { symlink: 'guide.md' },
    'docs/escape': { symlink: '../../etc/passwd' },
    'assets/data.bin': binary,
  };

  /** Release 1 and release 2 (a changed, a renamed, an added file, a new link, run.sh made executable). */
  async function twoReleases() {
    const repo = await buildRepo([first, second]);
    cleanups.push(repo.cleanup);
    // The fixture writes contents; the mode change is a commit of its own on top of the second tree.
    const git = (...args: string[]) =>
      exec('git', ['-C', repo.dir, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args]);
    await git('update-index', '--chmod=+x', 'run.sh');
    await git('commit', '-q', '-m', 'run.sh is executable');
    const secondCommit = (await git('rev-parse', 'HEAD')).stdout.trim();
    const dir = await tmp();
    const build = (commit: string, outFile: string, reuse?: EarlierZip) =>
      buildArtifact({
        gitDir: path.join(repo.dir, '.git'),
        commit,
        prefix: 'tools/',
        outFile: path.join(dir, outFile),
        reuse,
      });
    const one = await build(repo.shas[0]!, 'one.zip');
    const fresh = await build(secondCommit, 'two-fresh.zip');
    return { dir, build, one, fresh, firstCommit: repo.shas[0]!, secondCommit };
  }

  it('gives the same bytes as a fresh build, copying the shared files (renamed or re-moded too) and deflating the rest', {
    timeout: 90_000,
  }, async () => {
    const { dir, build, fresh, firstCommit, secondCommit } = await twoReleases();
    const reused = await build(secondCommit, 'two-reused.zip', {
      commit: firstCommit,
      zipFile: path.join(dir, 'one.zip'),
    });
    expect(reused).toEqual({ ...fresh, reusedEntries: 5 });
    expect(fresh.reusedEntries).toBe(0);
    const bytes = await readFile(path.join(dir, 'two-reused.zip'));
    expect(bytes.equals(await readFile(path.join(dir, 'two-fresh.zip')))).toBe(true);

    const entries = Object.fromEntries(
      (await readZip(path.join(dir, 'two-reused.zip'))).map((e) => [e.name.slice('tools/'.length), e]),
    );
    expect(Object.keys(entries)).toEqual([
      'README.md',
      'assets/data.bin',
      'docs/current',
      'docs/escape',
      'docs/guide.md',
      'run.sh',
      'src/added.ts',
      'src/keep.ts',
      'src/new-name.ts',
    ]);
    expect(entries['README.md']!.content.toString()).toBe('# Tools 1.1.0, changed\n');
    expect(entries['src/new-name.ts']!.content.toString()).toBe(moved);
    expect(entries['assets/data.bin']!.content.equals(binary)).toBe(true);
    expect(entries['run.sh']!.mode).toBe(0o100755);
    expect(entries['src/keep.ts']!.mode).toBe(0o100644);
    expect([entries['docs/current']!.mode, entries['docs/current']!.method]).toEqual([0o120777, 0]);
    expect([entries['docs/escape']!.mode, entries['docs/escape']!.content.toString()]).toEqual([
      0o100644,
      '../../etc/passwd',
    ]);
    await expectSoundToOtherReaders(path.join(dir, 'two-reused.zip'));
  });

  it('deflates every file, to the same bytes, when the earlier zip is missing, damaged, of another commit or another deflater', {
    timeout: 120_000,
  }, async () => {
    const { dir, build, one, fresh, firstCommit, secondCommit } = await twoReleases();
    const good = await readFile(path.join(dir, 'one.zip'));
    const variant = async (name: string, bytes: Buffer) => {
      await writeFile(path.join(dir, name), bytes);
      return path.join(dir, name);
    };
    const otherDeflater = Buffer.from(good);
    otherDeflater.write(
      'zlib 0.0.0'.padEnd(`zlib ${process.versions.zlib}`.length, '-'),
      good.length - `zlib ${process.versions.zlib}`.length,
      'latin1',
    );
    // A local header's signature overwritten: the central directory still reads, the entry does not.
    const brokenEntry = Buffer.from(good);
    const at = brokenEntry.indexOf(Buffer.from('tools/src/keep.ts'));
    brokenEntry.writeUInt32LE(0, at - 30);
    const cases: Array<[string, EarlierZip, RegExp]> = [
      ['missing', { commit: firstCommit, zipFile: path.join(dir, 'none.zip') }, /ENOENT/],
      [
        'garbage',
        { commit: firstCommit, zipFile: await variant('garbage.zip', Buffer.alloc(4096, 7)) },
        /not a zip file/,
      ],
      [
        'truncated',
        { commit: firstCommit, zipFile: await variant('cut.zip', good.subarray(0, good.length >> 1)) },
        /file is truncated/,
      ],
      [
        'another deflater',
        { commit: firstCommit, zipFile: await variant('other.zip', otherDeflater) },
        /another deflater/,
      ],
      [
        'another commit',
        { commit: secondCommit, zipFile: path.join(dir, 'one.zip') },
        /not the earlier commit/,
      ],
      [
        'a broken entry',
        { commit: firstCommit, zipFile: await variant('broken.zip', brokenEntry) },
        /no local header/,
      ],
    ];
    for (const [label, reuse, reason] of cases) {
      const built = await build(secondCommit, `two-${label.replaceAll(' ', '-')}.zip`, reuse);
      expect({ label, sha256: built.sha256, reused: built.reusedEntries }).toEqual({
        label,
        sha256: fresh.sha256,
        reused: 0,
      });
      expect(built.reuseSkipped).toMatch(reason);
    }
    // The same tree again: every file is reused and the bytes are the earlier zip's.
    const again = await build(firstCommit, 'one-again.zip', {
      commit: firstCommit,
      zipFile: path.join(dir, 'one.zip'),
    });
    expect([again.sha256, again.reusedEntries]).toEqual([one.sha256, 6]);
  });

  it('fetches the earlier zip from the blob store only when its bytes are the release’s', {
    timeout: 60_000,
  }, async () => {
    const { dir, one, firstCommit } = await twoReleases();
    const blobs = localBlobStore(path.join(dir, 'blobs'));
    const key = `artifacts/sha256/${one.sha256}.zip`;
    await blobs.putFile(key, path.join(dir, 'one.zip'), 'application/zip');
    const into = await tmp();
    const release = { commitSha: firstCommit, artifactKey: key, artifactSha256: one.sha256 };
    const fetched = await fetchEarlierZip(blobs, release, into);
    expect(fetched.commit).toBe(firstCommit);
    expect((await readFile(fetched.zipFile)).equals(await readFile(path.join(dir, 'one.zip')))).toBe(true);
    await expect(
      fetchEarlierZip(blobs, { ...release, artifactSha256: 'f'.repeat(64) }, into),
    ).rejects.toThrow(/not the bytes its release recorded/);
    await expect(
      fetchEarlierZip(blobs, { ...release, artifactKey: 'artifacts/sha256/none.zip' }, into),
    ).rejects.toThrow(/No blob/);
    await expect(fetchEarlierZip(blobs, { ...release, artifactKey: null }, into)).rejects.toThrow(/no zip/);
  });
});

describe('the zip writer', () => {
  it('adds zip64 records past 65,535 entries, and every reader still opens the zip', {
    timeout: 120_000,
  }, async () => {
    const file = path.join(await tmp(), 'many.zip');
    const writer = new ZipFileWriter(file);
    const count = 70_000;
    for (let i = 0; i < count; i++) {
      const data = Buffer.from(`${i}\n`);
      writer.add({
        name: `many/${i}.txt`,
        mode: 0o100644,
        method: STORED,
        crc32: crc32(data),
        size: data.length,
        data,
      });
    }
    const { sha256, sizeBytes } = writer.finish('comment');
    const bytes = await readFile(file);
    expect([sha256, sizeBytes]).toEqual([createHash('sha256').update(bytes).digest('hex'), bytes.length]);
    // The zip64 end of central directory record and its locator sit before the classic record.
    expect(bytes.readUInt32LE(bytes.length - 22 - 7 - 20)).toBe(0x07064b50);
    const zip = await yauzl.openPromise(file);
    expect(zip.entryCount).toBe(count);
    zip.close();
    expect(await expectSoundToOtherReaders(file)).toBe(count);
  });
});
