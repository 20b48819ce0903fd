import { runInWorker } from '../../analysis/threads.js';
import type { TreeAnalysis, TreeAnalysisInput } from './tree-analysis.js';

/**
 * Kept apart from `analyse-tree.ts` so that the server's own thread never loads the analysis's
 * modules (the language table, markdown, SBOM and manifest parsers): only the worker does, when a
 * release is cut, and an idle server stays smaller (docs/DECISIONS.md, D-60).
 *
 * The tree's analysis in a worker thread (which starts the file-pass workers in turn), so none of
 * it runs on the HTTP event loop: listing ~20,000 entries, reading and scanning every file,
 * components, languages, path checks and the diff. `workers: 0` runs it in the calling thread.
 */
export async function analyseTreeOffThread(input: TreeAnalysisInput): Promise<TreeAnalysis> {
  if (input.workers === 0) return (await import('./analyse-tree.js')).analyseTree(input);
  try {
    return await runInWorker<TreeAnalysis>(
      new URL('./analyse-worker.js', import.meta.url),
      input,
      input.timeoutMs,
    );
  } catch (error) {
    throw new Error(`analysing the tree failed: ${(error as Error).message}`);
  }
}
