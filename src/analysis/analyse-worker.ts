import { analyseTree, type TreeAnalysisInput } from './analyse-tree.js';
import { answerParent, workerInput } from './threads.js';

answerParent(analyseTree(workerInput<TreeAnalysisInput>()));
