/**
 * Runs `task` over `items` with at most `limit` running at once, starting them in order, and
 * answers each result at its item's index. Once `enough()` is true no further task starts (those
 * left are `undefined`); once one fails none does, and the failure is thrown.
 */
export async function mapConcurrently<T, R>(
  items: readonly T[],
  limit: number,
  task: (item: T) => Promise<R>,
  enough: () => boolean = () => false,
): Promise<Array<R | undefined>> {
  const results: Array<R | undefined> = Array.from({ length: items.length }, () => undefined);
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (next < items.length && !failed && !enough()) {
      const index = next++;
      try {
        results[index] = await task(items[index]!);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return results;
}

/**
 * `task`, shared by the calls that arrive while it runs: a burst of callers (probes of readiness)
 * starts it once and all receive that answer; the next call after it ends starts it again.
 */
export function sharedWhileRunning<R>(task: () => Promise<R>): () => Promise<R> {
  let running: Promise<R> | undefined;
  return () => {
    running ??= task().finally(() => {
      running = undefined;
    });
    return running;
  };
}
