import { z } from 'zod';
import type { AppContext } from '../context.js';
import type { JobSpec } from '../platform/jobs.js';
import { deliverUndeliveredMessages } from './outbox.js';

/** Every 5 minutes: messages a failed SMTP server or a stopped process left undelivered. */
export const outboxRetryJob: JobSpec<Record<string, never>, AppContext> = {
  name: 'identity-outbox-retry',
  data: z.object({}).strict() as z.ZodType<Record<string, never>>,
  cron: '*/5 * * * *',
  policy: 'singleton',
  retryLimit: 0,
  run: async (ctx) => {
    await deliverUndeliveredMessages(ctx, ctx.log);
  },
};
