import { answerParent, workerInput } from '../../analysis/threads.js';
import { type PassFile, runFilePass } from './file-pass.js';

const { repoPath, files } = workerInput<{ repoPath: string; files: PassFile[] }>();
answerParent(runFilePass(repoPath, files));
