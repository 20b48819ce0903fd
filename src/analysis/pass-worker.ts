import { parentPort, workerData } from 'node:worker_threads';
import { type PassFile, runFilePass } from './file-pass.js';

const { repoPath, files } = workerData as { repoPath: string; files: PassFile[] };
runFilePass(repoPath, files).then(
  (result) => {
    const transfer = [
      result.tokenHashes,
      result.shingleHashes,
      result.codeLineHashes,
      result.docLineHashes,
      result.docLineWords,
    ].map((array) => array.buffer as ArrayBuffer);
    parentPort!.postMessage({ ok: true, result }, transfer);
  },
  (error: unknown) =>
    parentPort!.postMessage({ ok: false, error: error instanceof Error ? error.message : String(error) }),
);
