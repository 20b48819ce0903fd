import os from 'node:os';
import { runInWorker } from '../../analysis/threads.js';
import type { PassFile, PassResult } from './file-pass.js';
import { runFilePass } from './file-pass.js';

/**
 * Splits the files into up to `workers` shares by size (largest first onto the least-loaded share),
 * so the pass uses every core. It is called in the analysis worker (never on the HTTP event loop):
 * the first share runs in that thread, each other share in a worker thread of its own.
 */
export async function runTreePass(
  repoPath: string,
  files: PassFile[],
  workers = defaultWorkers(),
): Promise<PassResult[]> {
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
