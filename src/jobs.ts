import type { AppContext } from './context.js';
import { payoutSweepJob, settlementReconcileJob } from './earnings/jobs.js';
import { outboxRetryJob } from './identity/jobs.js';
import type { AnyJobSpec } from './platform/jobs.js';
import { advisoryRecheckJob, advisorySyncJob } from './releases/advisory-jobs.js';
import { cutJob, resendCutsJob } from './releases/jobs.js';
import { webhookDeliveryJob, webhookFanOutJob, webhookResendJob } from './webhooks/jobs.js';

/** Every domain's background jobs; the job queue creates their queues and workers from this list. */
export const JOBS: AnyJobSpec<AppContext>[] = [
  outboxRetryJob,
  cutJob,
  resendCutsJob,
  settlementReconcileJob,
  payoutSweepJob,
  advisorySyncJob,
  advisoryRecheckJob,
  webhookFanOutJob,
  webhookDeliveryJob,
  webhookResendJob,
];
