import { answerParent, workerInput } from '../../analysis/threads.js';
import { analyseTree } from './analyse-tree.js';
import type { TreeAnalysisInput } from './tree-analysis.js';

answerParent(analyseTree(workerInput<TreeAnalysisInput>()));
