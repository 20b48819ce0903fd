import { answerParent, workerInput } from '../../analysis/threads.js';
import { type PassFile, runFilePass } from './file-pass.js';

const { repoPath, files } = workerInput<{ repoPath: string; files: PassFile[] }>();
answerParent(runFilePass(repoPath, files), (result) =>
  [
    result.tokenHashes,
    result.shingleHashes,
    result.codeLineHashes,
    result.docLineHashes,
    result.docLineWords,
  ].map((array) => array.buffer as ArrayBuffer),
);
