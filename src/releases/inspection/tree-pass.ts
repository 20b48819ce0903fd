import os from 'node:os';
import type { FileSample, SampledLines } from '../../analysis/engineering.js';
import type { TreeEntry } from '../../analysis/git.js';
import { isKeptFile } from '../../analysis/kept-files.js';
import { runInWorker } from '../../analysis/threads.js';
import type { FileResult, PassFile, PassResult } from './file-pass.js';
import { MAX_FILE_BYTES, runFilePass, sampleFiles, unreadFile } from './file-pass.js';
import { fileResultKey } from './file-results.js';

export interface TreePass {
  /** One result per entry, in tree order. */
  results: FileResult[];
  /** The engineering sample's files, in tree order, and the lines they stand for. */
  samples: FileSample[];
  lines: SampledLines;
  /** The text of every kept file (`isKeptFile`), by path. */
  kept: Map<string, string>;
  /** The results to keep for the next release, by `fileResultKey`. */
  keep: Map<string, FileResult>;
  /** How many files were read now, and how many results were taken from the earlier release. */
  read: number;
  reused: number;
}

/**
 * Every file's result: taken from `earlier` (an earlier release's results) when the same blob
 * sits at the same path with the same mode, else read and computed now. A file is read again
 * whatever is kept when the analysis needs its text (`isKeptFile`) or its engineering sample
 * was never computed. Either way the result is the same, so a release's aggregate does not depend
 * on what was kept.
 */
export async function passOverTree(
  repoPath: string,
  entries: TreeEntry[],
  earlier: Map<string, FileResult>,
  workers?: number,
): Promise<TreePass> {
  const inSample = sampleFiles(entries);
  const results = new Array<FileResult>(entries.length);
  const toRead: PassFile[] = [];
  let reused = 0;
  entries.forEach((entry, index) => {
    if (entry.size > MAX_FILE_BYTES) {
      results[index] = unreadFile(entry.mode);
      return;
    }
    const sample = inSample[index]!;
    const known = earlier.get(fileResultKey(entry));
    // A sampled code or doc file always has its sample; one without it was outside the sample then.
    const needsSample = sample && known !== undefined && !known.sample && known.slocKind !== null;
    if (known && !needsSample && !isKeptFile(entry.path, entry.size)) {
      results[index] = known;
      reused++;
    } else toRead.push({ ...entry, index, sample });
  });

  const kept = new Map<string, string>();
  for (const pass of await runTreePass(repoPath, toRead, workers)) {
    for (const { index, result } of pass.results) results[index] = result;
    for (const { path, text } of pass.kept) kept.set(path, text);
  }

  const samples: FileSample[] = [];
  const keep = new Map<string, FileResult>();
  entries.forEach((entry, index) => {
    const result = results[index]!;
    if (inSample[index] && result.sample) samples.push(result.sample);
    if (entry.size <= MAX_FILE_BYTES) keep.set(fileResultKey(entry), result);
  });
  const lines = sampledLines(results, inSample);
  return { results, samples, lines, kept, keep, read: toRead.length, reused };
}

/** Non-blank lines of code and doc files, all and sampled, for the engineering scale-up. */
function sampledLines(results: FileResult[], inSample: boolean[]): SampledLines {
  const lines: SampledLines = { code: { all: 0, sampled: 0 }, doc: { all: 0, sampled: 0 } };
  results.forEach((result, index) => {
    if (!result.slocKind) return;
    const bucket = lines[result.slocKind];
    bucket.all += result.facts.sloc;
    if (inSample[index] && result.sample) bucket.sampled += result.facts.sloc;
  });
  return lines;
}

/**
 * Splits the files into up to `workers` shares by size (largest first onto the least-loaded share),
 * so the pass uses every core. It is called in the analysis worker (never on the HTTP event loop):
 * the first share runs in that thread, each other share in a worker thread of its own.
 */
async function runTreePass(
  repoPath: string,
  files: PassFile[],
  workers = defaultWorkers(),
): Promise<PassResult[]> {
  if (files.length === 0) return [];
  if (workers <= 0) return [await runFilePass(repoPath, files)];
  const count = Math.max(1, Math.min(workers, Math.ceil(files.length / 200)));
  const shares: PassFile[][] = Array.from({ length: count }, () => []);
  const load = new Array<number>(count).fill(0);
  for (const file of [...files].sort((a, b) => b.size - a.size)) {
    let least = 0;
    for (let i = 1; i < count; i++) if (load[i]! < load[least]!) least = i;
    shares[least]!.push(file);
    load[least]! += file.size + 512;
  }
  const [own, ...others] = shares;
  return Promise.all([
    runFilePass(repoPath, own!),
    ...others.map((share) =>
      runInWorker<PassResult>(new URL('./pass-worker.js', import.meta.url), { repoPath, files: share }),
    ),
  ]);
}

export function defaultWorkers(): number {
  return Math.max(1, Math.min(4, os.availableParallelism()));
}
