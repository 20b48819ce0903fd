import { crc32 } from 'node:zlib';
import { listTree, readBlobs, type TreeEntry, type TreeLimits } from '../../analysis/git.js';
import { runInWorker } from '../../analysis/threads.js';
import { resolveSymlinks } from '../../scan/symlinks.js';
import { DEFLATER_RECORD, deflatedEntry } from './deflater.js';
import {
  type EarlierZip,
  NotReusable,
  openReusableEntries,
  type ReusableEntries,
} from './reusable-entries.js';
import { zipEntries } from './zip-names.js';
import { STORED, type ZipEntryData, ZipFileWriter } from './zip-writer.js';

export type { EarlierZip } from './reusable-entries.js';

export interface ArtifactInput {
  /** The bare repository; only read. */
  gitDir: string;
  commit: string;
  /** The zip's top folder, with its trailing slash (`<slug>/`). */
  prefix: string;
  outFile: string;
  /** The configured tree limits (the defaults when omitted). */
  treeLimits?: TreeLimits;
  /**
   * An earlier release of the same listing (its zip on local disk and its commit, see
   * `fetchEarlierZip`): the files both trees share are copied from its zip, already deflated.
   * The bytes written are the same with or without it.
   */
  reuse?: EarlierZip;
}

export interface Artifact {
  sha256: string;
  sizeBytes: number;
  /** Entries copied from the earlier zip instead of deflated. */
  reusedEntries: number;
  /** Why an earlier zip that was given was not used (every file was deflated then). */
  reuseSkipped?: string;
}

const LINK_MODE = 0o120777;

/**
 * Builds the release zip of `commit` in a worker thread (reading, deflating and hashing ~200 MB
 * never runs on the HTTP event loop): every file of the tree under `prefix`, sorted, one fixed
 * timestamp, the executable bit kept, deflated; identical trees give identical bytes. With
 * `reuse`, the files an earlier release's zip already holds are copied from it, deflated as they
 * are, and only the others are read and deflated: the bytes are the same as without it.
 *
 * A symlink is stored as a link only when it resolves inside the tree (`resolveSymlinks`, the
 * scan's own reading); any other is stored as a small regular file holding its target text, so
 * no entry of the zip is a link that leaves it. A name an extractor could split (`\`) or that
 * holds control characters is stored with those characters percent-encoded (`%5C`), and a `.` or
 * `..` component as `%2E`; should that collide with another name, the later entry is left out.
 * (Such releases fail the scan anyway; the zip is still safe to open.)
 */
export async function buildArtifact(
  input: ArtifactInput,
  options: { timeoutMs?: number } = {},
): Promise<Artifact> {
  try {
    return await runInWorker<Artifact>(
      new URL('./artifact-worker.js', import.meta.url),
      input,
      options.timeoutMs,
    );
  } catch (error) {
    throw new Error(`building the zip failed: ${(error as Error).message}`);
  }
}

/** The zip itself, in the calling thread: `buildArtifact` runs it in a worker. */
export async function writeArtifact(input: ArtifactInput): Promise<Artifact> {
  let reuseSkipped: string | undefined;
  // The earlier zip is opened (its central directory, its commit's tree) while this tree is read.
  const opening = input.reuse
    ? openReusableEntries(input.reuse, input).catch((error: unknown) => {
        reuseSkipped = (error as Error).message;
        return undefined;
      })
    : undefined;
  let reusable: ReusableEntries | undefined;
  try {
    const files = zipEntries(await listTree(input.gitDir, input.commit, input.treeLimits), input.prefix);
    const linkEntry = await linkEntries(input.gitDir, files);
    reusable = await opening;
    if (reusable) {
      try {
        return await writeZip(input, files, linkEntry, reusable);
      } catch (error) {
        // Found unusable half-way (a short read): the zip is written again, deflating every file.
        if (!(error instanceof NotReusable)) throw error;
        reuseSkipped = error.message;
      }
    }
    return { ...(await writeZip(input, files, linkEntry)), reuseSkipped };
  } finally {
    (reusable ?? (await opening))?.close();
  }
}

/** How each symlink of the tree is stored: a link when it resolves inside the tree, else a file holding its target. */
async function linkEntries(
  gitDir: string,
  files: Array<{ file: TreeEntry; name: string }>,
): Promise<(file: TreeEntry, name: string) => ZipEntryData> {
  const links = files.filter(({ file }) => file.mode === '120000');
  const targets = new Map<string, Buffer>();
  await readBlobs(
    gitDir,
    links.map(({ file }) => file.sha),
    (i, content) => {
      targets.set(links[i]!.file.path, content);
    },
  );
  const inside = resolveSymlinks(
    new Map([...targets].map(([path, target]) => [path, target.toString('utf8')])),
  );
  return (file, name) => {
    const target = targets.get(file.path)!;
    const mode = inside.get(file.path)!.inside ? LINK_MODE : 0o100644;
    return { name, mode, method: STORED, crc32: crc32(target), size: target.length, data: target };
  };
}

/**
 * Writes the entries in order. Files `reusable` holds are copied from it; the others stream from
 * git in the same order and are deflated as they arrive, so memory holds about one file at a time.
 */
async function writeZip(
  input: ArtifactInput,
  files: Array<{ file: TreeEntry; name: string }>,
  linkEntry: (file: TreeEntry, name: string) => ZipEntryData,
  reusable?: ReusableEntries,
): Promise<Artifact> {
  const writer = new ZipFileWriter(input.outFile);
  try {
    const fresh: number[] = [];
    files.forEach(({ file }, at) => {
      if (file.mode !== '120000' && !reusable?.has(file.sha)) fresh.push(at);
    });
    let next = 0;
    let reusedEntries = 0;
    const writeUpTo = (end: number) => {
      for (; next < end; next++) {
        const { file, name } = files[next]!;
        if (file.mode === '120000') writer.add(linkEntry(file, name));
        else {
          writer.add(reusable!.take(file.sha, name, fileMode(file))!);
          reusedEntries++;
        }
      }
    };
    await readBlobs(
      input.gitDir,
      fresh.map((at) => files[at]!.file.sha),
      (i, content) => {
        writeUpTo(fresh[i]!);
        const { file, name } = files[fresh[i]!]!;
        writer.add(deflatedEntry(name, fileMode(file), content));
        next = fresh[i]! + 1;
      },
    );
    writeUpTo(files.length);
    return { ...writer.finish(DEFLATER_RECORD), reusedEntries };
  } catch (error) {
    writer.abandon();
    throw error;
  }
}

const fileMode = (file: TreeEntry) => (file.mode === '100755' ? 0o100755 : 0o100644);
