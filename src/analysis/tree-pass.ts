import os from 'node:os';
import { Worker } from 'node:worker_threads';
import type { PassFile, PassResult } from './file-pass.js';
import { runFilePass } from './file-pass.js';

/**
 * Splits the files between worker threads by size (largest first onto the least-loaded worker), so
 * the scan never runs on the HTTP event loop and uses every core. `workers: 0` runs in-process.
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
  return Promise.all(shares.map((share) => runInWorker(repoPath, share)));
}

export function defaultWorkers(): number {
  return Math.max(1, Math.min(4, os.availableParallelism()));
}

function runInWorker(repoPath: string, files: PassFile[]): Promise<PassResult> {
  const own = new URL(import.meta.url);
  const workerData = { repoPath, files };
  // Under tsx or vitest the sources are TypeScript: load them through tsx's loader in the worker.
  const worker = own.pathname.endsWith('.ts')
    ? new Worker(
        `import('tsx/esm/api').then((m) => { m.register(); return import(${JSON.stringify(new URL('./pass-worker.ts', own).href)}); })`,
        { eval: true, workerData },
      )
    : new Worker(new URL('./pass-worker.js', own), { workerData });
  return new Promise((resolve, reject) => {
    worker.once('message', (message: { ok: true; result: PassResult } | { ok: false; error: string }) => {
      if (message.ok) resolve(message.result);
      else reject(new Error(`file pass failed: ${message.error}`));
      void worker.terminate();
    });
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (code !== 0) reject(new Error(`file pass worker exited with code ${code}`));
    });
  });
}
