import { answerParent, workerInput } from '../../analysis/threads.js';
import { type ArtifactInput, writeArtifact } from './artifact.js';

answerParent(writeArtifact(workerInput<ArtifactInput>()));
