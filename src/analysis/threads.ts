import os from 'node:os';
import { parentPort, Worker, workerData } from 'node:worker_threads';

/** Nice value of worker threads: under CPU contention the HTTP thread (nice 0) is scheduled first. */
const WORKER_NICE = 10;

type Answer<T> = { ok: true; result: T } | { ok: false; error: string };

/**
 * Runs a worker module (`new URL('./x-worker.js', import.meta.url)`) on `data` and resolves with
 * what it answers through `answerParent`. CPU-heavy steps of a cut run this way, so the HTTP event
 * loop only ever waits for a message. After `timeoutMs` the worker (and any worker it started) is
 * stopped and the promise rejects. Under tsx or vitest the sources are TypeScript: the worker then
 * loads them through tsx's loader.
 */
export function runInWorker<T>(workerModule: URL, data: unknown, timeoutMs?: number): Promise<T> {
  const typescript = import.meta.url.endsWith('.ts');
  const worker = typescript
    ? new Worker(
        `import('tsx/esm/api').then((m) => { m.register(); return import(${JSON.stringify(workerModule.href.replace(/\.js$/, '.ts'))}); })`,
        { eval: true, workerData: data },
      )
    : new Worker(workerModule, { workerData: data });
  return new Promise<T>((resolve, reject) => {
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            reject(new Error(`stopped after ${Math.round(timeoutMs / 1000)} s`));
            void worker.terminate();
          }, timeoutMs);
    worker.once('message', (answer: Answer<T>) => {
      if (answer.ok) resolve(answer.result);
      else reject(new Error(answer.error));
      void worker.terminate();
    });
    worker.once('error', reject);
    worker.once('exit', (code) => {
      clearTimeout(timer);
      if (code !== 0) reject(new Error(`worker exited with code ${code}`));
    });
  });
}

/**
 * Inside a worker: the data it was started with. First the thread lowers its own CPU priority, so
 * background work yields the CPU to the HTTP thread. On Linux nice is per thread and inherited by
 * the threads and git processes it starts; elsewhere it would slow the whole process, so it is left.
 */
export function workerInput<T>(): T {
  if (process.platform === 'linux') os.setPriority(0, WORKER_NICE);
  return workerData as T;
}

/** Inside a worker: sends the outcome of `work` to the thread that started it (buffers in `transfer` are moved, not copied). */
export function answerParent<T>(work: Promise<T>, transfer: (result: T) => ArrayBuffer[] = () => []): void {
  work.then(
    (result) => parentPort!.postMessage({ ok: true, result } satisfies Answer<T>, transfer(result)),
    (error: unknown) =>
      parentPort!.postMessage({
        ok: false,
        error: error instanceof Error ? error.message : String(error),
      } satisfies Answer<T>),
  );
}
