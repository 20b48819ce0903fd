import { z } from 'zod';
import type { AppContext } from '../context.js';
import type { JobSpec } from '../platform/jobs.js';
import { attemptDelivery, type DueAttempt, fanOutEvents, type WebhookContext } from './delivery.js';
import { overdueDeliveries } from './store.js';

/**
 * Webhooks on the job queue: the fan-out after an event commits, one job per delivery attempt
 * (a retry is the next attempt's job, started after its back-off), and a periodic run that picks
 * up what a crash dropped. The rows are the record; a job is only a nudge.
 */

/** Matches committed events to subscriptions; `announceWebhookEvents` sends it after a commit. */
export const webhookFanOutJob: JobSpec<Record<string, never>, AppContext> = {
  name: 'webhooks.fan-out',
  data: z.object({}) as z.ZodType<Record<string, never>>,
  // One waiting run covers every event committed before it starts.
  policy: 'stately',
  retryLimit: 3,
  async run(ctx) {
    await sendAttempts(ctx, await fanOutEvents(ctx));
  },
};

/** One attempt of one delivery. Retries are scheduled by the attempt itself, never by pg-boss. */
export const webhookDeliveryJob: JobSpec<{ deliveryId: string; attempt: number }, AppContext> = {
  name: 'webhooks.deliver',
  data: z.object({ deliveryId: z.uuid(), attempt: z.number().int().min(1) }),
  retryLimit: 0,
  expireInSeconds: 5 * 60,
  async run(ctx, data) {
    const next = await attemptDelivery(ctx, data.deliveryId, data.attempt);
    if (next) await sendAttempts(ctx, [next]);
  },
};

/** Overdue by this much, a pending delivery lost its job (or its process died mid-attempt). */
const OVERDUE_MS = 60_000;

/** Every minute: events not fanned out and deliveries whose attempt was lost. */
export const webhookResendJob: JobSpec<Record<string, never>, AppContext> = {
  name: 'webhooks.resend',
  data: z.object({}) as z.ZodType<Record<string, never>>,
  cron: '* * * * *',
  policy: 'singleton',
  retryLimit: 0,
  async run(ctx) {
    const due = await fanOutEvents(ctx);
    const overdue = await overdueDeliveries(
      ctx.database.db,
      new Date(ctx.clock.now().getTime() - OVERDUE_MS),
      100,
    );
    for (const delivery of overdue) {
      due.push({ deliveryId: delivery.id, attempt: delivery.attempts + 1, delaySeconds: 0 });
    }
    await sendAttempts(ctx, due);
  },
};

async function sendAttempts(ctx: WebhookContext, due: DueAttempt[]): Promise<void> {
  for (const attempt of due) {
    await ctx.jobs?.send(
      webhookDeliveryJob,
      { deliveryId: attempt.deliveryId, attempt: attempt.attempt },
      { startAfterSeconds: attempt.delaySeconds > 0 ? attempt.delaySeconds : undefined },
    );
  }
}
