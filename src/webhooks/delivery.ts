import type { AppContext } from '../context.js';
import { systemClock } from '../platform/clock.js';
import { type HostLookup, systemLookup } from './addresses.js';
import type { WebhookAudience } from './audience.js';
import { unsealSecret } from './secrets.js';
import { sendSigned } from './send.js';
import {
  candidateSubscriptions,
  claimAttempt,
  countOutcome,
  disableSubscription,
  type EventRow,
  findEvent,
  findSubscription,
  finishAttempt,
  pendingEvents,
  recordFanOut,
  type SubscriptionRow,
} from './store.js';

export type WebhookContext = Pick<
  AppContext,
  'database' | 'clock' | 'config' | 'appSecret' | 'log' | 'jobs' | 'webhookAudience'
> & { webhookLookup?: HostLookup };

const FAN_OUT_BATCH = 100;

/** A delivery to send: its id and the attempt it is at (1 for the first). */
export interface DueAttempt {
  deliveryId: string;
  attempt: number;
  /** Seconds to wait first (a retry's back-off). */
  delaySeconds: number;
}

/**
 * Matches every event not yet fanned out to the subscriptions that hear it and records one
 * delivery per subscriber; returns the first attempts to send. Holders are checked against what
 * they hold when the event is fanned out: a wallet that holds no version an advisory names hears
 * nothing of it.
 */
export async function fanOutEvents(ctx: WebhookContext): Promise<DueAttempt[]> {
  const due: DueAttempt[] = [];
  for (;;) {
    const events = await pendingEvents(ctx.database.db, FAN_OUT_BATCH);
    for (const event of events) {
      const subscribers = await recipients(ctx.database.db, ctx.webhookAudience, event);
      const created = await recordFanOut(
        ctx.database.db,
        event.id,
        subscribers.map((subscription) => subscription.id),
        ctx.clock.now(),
      );
      due.push(...created.map((delivery) => ({ deliveryId: delivery.id, attempt: 1, delaySeconds: 0 })));
    }
    if (events.length < FAN_OUT_BATCH) return due;
  }
}

async function recipients(
  db: WebhookContext['database']['db'],
  audience: WebhookAudience,
  event: EventRow,
): Promise<SubscriptionRow[]> {
  const candidates = await candidateSubscriptions(db, event);
  if (event.audience === 'creator') return candidates;
  if (!event.listingId) return [];
  const hearing: SubscriptionRow[] = [];
  for (const subscription of candidates) {
    const holds = await audience.holds(subscription.wallet!, event.listingId, event.version ?? undefined);
    if (holds) hearing.push(subscription);
  }
  return hearing;
}

/** The body every subscriber of an event receives: Standard Webhooks' `{type, timestamp, data}`. */
export function eventBody(event: EventRow): string {
  return JSON.stringify({ type: event.type, timestamp: event.createdAt.toISOString(), data: event.data });
}

/**
 * One attempt of one delivery. Success ends it; a failure is retried after the next delay of
 * WEBHOOK_RETRY_DELAYS_SECONDS; the last failure disables the subscription, with the reason its
 * owner reads in the subscription list. Returns the next attempt to schedule, if any.
 */
export async function attemptDelivery(
  ctx: WebhookContext,
  deliveryId: string,
  attempt: number,
): Promise<DueAttempt | undefined> {
  const db = ctx.database.db;
  const { retryDelaysSeconds, timeoutMs, allowPrivateAddresses } = ctx.config.webhooks;
  const now = ctx.clock.now();
  // Taken again by the periodic run only if this attempt never reports back.
  const leaseEnd = new Date(now.getTime() + timeoutMs + 60_000);
  const delivery = await claimAttempt(db, deliveryId, attempt, now, leaseEnd);
  if (!delivery) return undefined;
  const subscription = await findSubscription(db, delivery.subscriptionId);
  const event = await findEvent(db, delivery.eventId);
  if (!subscription || !event) return undefined;
  if (subscription.disabledAt) {
    await finishAttempt(db, deliveryId, {
      state: 'failed',
      status: null,
      error: 'not sent: the subscription is disabled',
      nextAttemptAt: null,
    });
    return undefined;
  }
  const result = await sendSigned(
    {
      url: subscription.url,
      messageId: `msg_${delivery.id}`,
      // The wall clock, not the service's: the receiver checks it against its own.
      timestamp: systemClock.now(),
      body: eventBody(event),
      secret: unsealSecret(ctx.appSecret, subscription.id, subscription.sealedSecret),
    },
    { timeoutMs, allowPrivate: allowPrivateAddresses, lookup: ctx.webhookLookup ?? systemLookup },
  );
  const at = ctx.clock.now();
  await countOutcome(db, subscription.id, result.ok);
  if (result.ok) {
    await finishAttempt(db, deliveryId, {
      state: 'delivered',
      status: result.status,
      error: null,
      nextAttemptAt: null,
      deliveredAt: at,
    });
    return undefined;
  }
  const delay = retryDelaysSeconds[attempt - 1];
  if (delay !== undefined) {
    await finishAttempt(db, deliveryId, {
      state: 'pending',
      status: result.status,
      error: result.error,
      nextAttemptAt: new Date(at.getTime() + delay * 1000),
    });
    return { deliveryId, attempt: attempt + 1, delaySeconds: delay };
  }
  await finishAttempt(db, deliveryId, {
    state: 'failed',
    status: result.status,
    error: result.error,
    nextAttemptAt: null,
  });
  await disableSubscription(
    db,
    subscription.id,
    `Disabled ${at.toISOString()}: the ${event.type} event (delivery ${delivery.id}) failed on all ${attempt} attempts; the last: ${result.error}. Delete this subscription and subscribe again once the receiver works.`,
    at,
  );
  ctx.log.warn(
    { subscriptionId: subscription.id, deliveryId, error: result.error },
    'webhook subscription disabled',
  );
  return undefined;
}
