import { outboxRetryJob } from './identity/jobs.js';
import type { AnyJobSpec } from './platform/jobs.js';

/** Every domain's background jobs; the job queue creates their queues and workers from this list. */
export const JOBS: AnyJobSpec[] = [outboxRetryJob];
