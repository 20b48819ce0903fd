import { answerParent, workerInput } from '../../analysis/threads.js';
import { analyseTree, type TreeAnalysisInput } from './analyse-tree.js';

answerParent(analyseTree(workerInput<TreeAnalysisInput>()));
