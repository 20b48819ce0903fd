import type { AppContext } from '../context.js';
import type { Db } from '../db/connect.js';
import { audienceOf, type WebhookEventType } from './catalogue.js';
import { webhookFanOutJob } from './jobs.js';
import { insertEvent } from './store.js';

/**
 * The one way an event enters the webhooks (docs/WEBHOOKS.md, "Raising an event").
 *
 * 1. `enqueueWebhookEvent(tx, event, at)` inside the transaction that causes the event: a change
 *    that rolls back announces nothing, and one that commits is never lost.
 * 2. `announceWebhookEvents(ctx)` after that transaction commits: the fan-out job matches the
 *    event to subscriptions and queues one delivery per subscriber, each signed and retried on
 *    its own. A nudge that is lost (a crash between commit and send) is made up by the periodic
 *    `webhooks.resend` job within a minute.
 */
export interface WebhookEvent {
  type: WebhookEventType;
  /** The creator the event concerns (creator events are delivered to that creator's subscriptions). */
  creatorId?: string;
  /** The listing it concerns: holder events reach wallets holding it. */
  listingId?: string;
  /** Holder events about one version (an advisory, a yank) reach only wallets entitled to it. */
  version?: string;
  /** The event's `data`, as docs/WEBHOOKS.md shows it for its type (snake_case, amounts as strings). */
  data: Record<string, unknown>;
  /** An event with the same key is recorded once (a sale per purchase, a verdict per release). */
  dedupeKey?: string;
}

export async function enqueueWebhookEvent(db: Db, event: WebhookEvent, at: Date): Promise<void> {
  await insertEvent(db, {
    type: event.type,
    audience: audienceOf(event.type),
    creatorId: event.creatorId ?? null,
    listingId: event.listingId ?? null,
    version: event.version ?? null,
    data: event.data,
    dedupeKey: event.dedupeKey ?? null,
    createdAt: at,
  });
}

/** After the commit: fan out what was enqueued now, not at the next periodic run. */
export async function announceWebhookEvents(ctx: Pick<AppContext, 'jobs' | 'log'>): Promise<void> {
  try {
    await ctx.jobs?.send(webhookFanOutJob, {});
  } catch (error) {
    // The event is recorded; the periodic run fans it out.
    ctx.log.warn({ err: error }, 'webhook fan-out not queued; the periodic run will take it');
  }
}
