import { and, desc, eq, isNull, lt, or, sql } from 'drizzle-orm';
import type { Db } from '../db/connect.js';
import { webhookDeliveries, webhookEvents, webhookSubscriptions } from '../db/schema/index.js';

export type SubscriptionRow = typeof webhookSubscriptions.$inferSelect;
export type EventRow = typeof webhookEvents.$inferSelect;
export type DeliveryRow = typeof webhookDeliveries.$inferSelect;

export async function insertEvent(db: Db, row: typeof webhookEvents.$inferInsert): Promise<void> {
  await db.insert(webhookEvents).values(row).onConflictDoNothing();
}

/** Events not yet fanned out, oldest first. */
export function pendingEvents(db: Db, limit: number): Promise<EventRow[]> {
  return db
    .select()
    .from(webhookEvents)
    .where(isNull(webhookEvents.fannedOutAt))
    .orderBy(webhookEvents.createdAt)
    .limit(limit);
}

/** Subscriptions that may hear an event: enabled, of its audience, asking for its type. */
export async function candidateSubscriptions(db: Db, event: EventRow): Promise<SubscriptionRow[]> {
  // A creator event names its creator; one that does not reaches no one.
  if (event.audience === 'creator' && !event.creatorId) return [];
  const wants = sql`${webhookSubscriptions.events} @> ${JSON.stringify([event.type])}::jsonb`;
  const audience =
    event.audience === 'creator'
      ? and(
          eq(webhookSubscriptions.kind, 'creator'),
          eq(webhookSubscriptions.creatorId, event.creatorId ?? ''),
        )
      : and(
          eq(webhookSubscriptions.kind, 'holder'),
          event.listingId
            ? or(isNull(webhookSubscriptions.listingId), eq(webhookSubscriptions.listingId, event.listingId))
            : isNull(webhookSubscriptions.listingId),
        );
  return db
    .select()
    .from(webhookSubscriptions)
    .where(and(isNull(webhookSubscriptions.disabledAt), wants, audience));
}

/**
 * Records an event's deliveries and marks it fanned out, in one transaction; a repeat (another
 * worker, a retry) adds nothing. Returns the deliveries this call created.
 */
export async function recordFanOut(
  db: Db,
  eventId: string,
  subscriptionIds: string[],
  at: Date,
): Promise<Array<{ id: string }>> {
  return db.transaction(async (tx) => {
    const marked = await tx
      .update(webhookEvents)
      .set({ fannedOutAt: at })
      .where(and(eq(webhookEvents.id, eventId), isNull(webhookEvents.fannedOutAt)))
      .returning({ id: webhookEvents.id });
    if (marked.length === 0 || subscriptionIds.length === 0) return [];
    return tx
      .insert(webhookDeliveries)
      .values(
        subscriptionIds.map((subscriptionId) => ({
          eventId,
          subscriptionId,
          state: 'pending' as const,
          nextAttemptAt: at,
          createdAt: at,
        })),
      )
      .onConflictDoNothing()
      .returning({ id: webhookDeliveries.id });
  });
}

/**
 * Takes attempt `attempt` of a pending delivery: only one caller gets it (a repeated job finds the
 * count moved on). `retryAt` is when the periodic run may take it again if this attempt never
 * reports (its process died).
 */
export async function claimAttempt(
  db: Db,
  id: string,
  attempt: number,
  at: Date,
  retryAt: Date,
): Promise<DeliveryRow | undefined> {
  const [row] = await db
    .update(webhookDeliveries)
    .set({ attempts: attempt, lastAttemptAt: at, nextAttemptAt: retryAt })
    .where(
      and(
        eq(webhookDeliveries.id, id),
        eq(webhookDeliveries.state, 'pending'),
        eq(webhookDeliveries.attempts, attempt - 1),
      ),
    )
    .returning();
  return row;
}

export async function findEvent(db: Db, id: string): Promise<EventRow | undefined> {
  const [row] = await db.select().from(webhookEvents).where(eq(webhookEvents.id, id));
  return row;
}

export async function findSubscription(db: Db, id: string): Promise<SubscriptionRow | undefined> {
  const [row] = await db.select().from(webhookSubscriptions).where(eq(webhookSubscriptions.id, id));
  return row;
}

export async function finishAttempt(
  db: Db,
  id: string,
  outcome: {
    state: 'pending' | 'delivered' | 'failed';
    status: number | null;
    error: string | null;
    nextAttemptAt: Date | null;
    deliveredAt?: Date;
  },
): Promise<void> {
  await db
    .update(webhookDeliveries)
    .set({
      state: outcome.state,
      lastStatus: outcome.status,
      lastError: outcome.error,
      nextAttemptAt: outcome.nextAttemptAt,
      deliveredAt: outcome.deliveredAt ?? null,
    })
    .where(eq(webhookDeliveries.id, id));
}

/** A delivered attempt ends the subscription's run of failures; a failed one adds to it. */
export async function countOutcome(db: Db, subscriptionId: string, delivered: boolean): Promise<void> {
  await db
    .update(webhookSubscriptions)
    .set({
      consecutiveFailures: delivered ? 0 : sql`${webhookSubscriptions.consecutiveFailures} + 1`,
    })
    .where(eq(webhookSubscriptions.id, subscriptionId));
}

export async function disableSubscription(db: Db, id: string, reason: string, at: Date): Promise<void> {
  await db
    .update(webhookSubscriptions)
    .set({ disabledAt: at, disabledReason: reason })
    .where(and(eq(webhookSubscriptions.id, id), isNull(webhookSubscriptions.disabledAt)));
}

/** Pending deliveries whose attempt is overdue: its job was lost, or its process died mid-attempt. */
export function overdueDeliveries(db: Db, before: Date, limit: number): Promise<DeliveryRow[]> {
  return db
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.state, 'pending'), lt(webhookDeliveries.nextAttemptAt, before)))
    .orderBy(webhookDeliveries.nextAttemptAt)
    .limit(limit);
}

export async function insertSubscription(
  db: Db,
  row: typeof webhookSubscriptions.$inferInsert,
): Promise<SubscriptionRow> {
  const [inserted] = await db.insert(webhookSubscriptions).values(row).returning();
  return inserted!;
}

/** A creator's or a wallet's subscriptions, newest first. */
export function subscriptionsOf(
  db: Db,
  owner: { creatorId: string } | { wallet: string },
): Promise<SubscriptionRow[]> {
  return db
    .select()
    .from(webhookSubscriptions)
    .where(ownedBy(owner))
    .orderBy(desc(webhookSubscriptions.createdAt), desc(webhookSubscriptions.id));
}

export async function ownSubscription(
  db: Db,
  owner: { creatorId: string } | { wallet: string },
  id: string,
): Promise<SubscriptionRow | undefined> {
  const [row] = await db
    .select()
    .from(webhookSubscriptions)
    .where(and(eq(webhookSubscriptions.id, id), ownedBy(owner)));
  return row;
}

function ownedBy(owner: { creatorId: string } | { wallet: string }) {
  return 'creatorId' in owner
    ? and(eq(webhookSubscriptions.kind, 'creator'), eq(webhookSubscriptions.creatorId, owner.creatorId))
    : and(eq(webhookSubscriptions.kind, 'holder'), eq(webhookSubscriptions.wallet, owner.wallet));
}

/** Deletes a subscription and its delivery log (the events stay: others may have heard them). */
export async function deleteSubscription(db: Db, id: string): Promise<boolean> {
  const deleted = await db
    .delete(webhookSubscriptions)
    .where(eq(webhookSubscriptions.id, id))
    .returning({ id: webhookSubscriptions.id });
  return deleted.length > 0;
}

/** A subscription's delivery log, newest first, with each event's type. */
export function deliveryLog(db: Db, subscriptionId: string, limit: number) {
  return db
    .select({
      id: webhookDeliveries.id,
      eventId: webhookDeliveries.eventId,
      type: webhookEvents.type,
      state: webhookDeliveries.state,
      attempts: webhookDeliveries.attempts,
      lastAttemptAt: webhookDeliveries.lastAttemptAt,
      lastStatus: webhookDeliveries.lastStatus,
      lastError: webhookDeliveries.lastError,
      nextAttemptAt: webhookDeliveries.nextAttemptAt,
      createdAt: webhookDeliveries.createdAt,
      deliveredAt: webhookDeliveries.deliveredAt,
    })
    .from(webhookDeliveries)
    .innerJoin(webhookEvents, eq(webhookEvents.id, webhookDeliveries.eventId))
    .where(eq(webhookDeliveries.subscriptionId, subscriptionId))
    .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
    .limit(limit);
}

export async function countSubscriptions(
  db: Db,
  owner: { creatorId: string } | { wallet: string },
): Promise<number> {
  const [row] = await db
    .select({ count: sql<number>`count(*)::int` })
    .from(webhookSubscriptions)
    .where(ownedBy(owner));
  return row?.count ?? 0;
}
