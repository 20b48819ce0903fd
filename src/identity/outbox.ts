import type { FastifyBaseLogger } from 'fastify';
import nodemailer, { type Transporter } from 'nodemailer';
import type { Config } from '../config.js';
import type { AppContext } from '../context.js';
import type { Db } from '../db/connect.js';
import { claimMessage, finishMessage, insertMessage, listUndelivered } from './store.js';

/**
 * Messages to people go through an outbox: written in the transaction that causes them (so a
 * rolled-back change announces nothing), delivered after commit by SMTP when SMTP_URL is set, and
 * otherwise written to the log and kept in the database. Every attempt's outcome is recorded.
 */

export interface OutgoingMessage {
  kind: string;
  creatorId?: string;
  recipient: string;
  subject: string;
  body: string;
}

export const MAX_DELIVERY_ATTEMPTS = 5;
/** A message left `sending` this long was taken by a process that died; it may be taken again. */
const STALE_SENDING_MS = 10 * 60 * 1000;

export function enqueueMessage(db: Db, message: OutgoingMessage, at: Date): Promise<string> {
  return insertMessage(db, { ...message, creatorId: message.creatorId ?? null, createdAt: at });
}

type OutboxContext = Pick<AppContext, 'database' | 'clock' | 'config'>;

const inFlight = new WeakMap<OutboxContext['database'], Set<Promise<void>>>();
const transports = new WeakMap<Config, Transporter>();

/** Starts delivery of committed messages without holding up the response. */
export function deliverAfterCommit(ctx: OutboxContext, ids: string[], log: FastifyBaseLogger): void {
  if (ids.length === 0) return;
  const running = inFlight.get(ctx.database) ?? new Set();
  inFlight.set(ctx.database, running);
  const delivery = (async () => {
    for (const id of ids) await deliverMessage(ctx, id, log);
  })()
    .catch((error) => log.error({ err: error }, 'outbox delivery failed'))
    .finally(() => running.delete(delivery));
  running.add(delivery);
}

/** Waits for deliveries started by `deliverAfterCommit`; run before the database closes. */
export async function drainOutbox(ctx: Pick<AppContext, 'database'>): Promise<void> {
  const running = inFlight.get(ctx.database);
  while (running && running.size > 0) await Promise.allSettled([...running]);
}

/** Delivers one message unless another deliverer has it or it is done. */
export async function deliverMessage(ctx: OutboxContext, id: string, log: FastifyBaseLogger): Promise<void> {
  const db = ctx.database.db;
  const now = ctx.clock.now();
  const message = await claimMessage(db, id, now, new Date(now.getTime() - STALE_SENDING_MS));
  if (!message) return;
  const attempts = message.attempts + 1;
  const { smtpUrl, from } = ctx.config.mail;
  if (!smtpUrl) {
    log.info(
      {
        outbox: {
          id,
          kind: message.kind,
          to: message.recipient,
          subject: message.subject,
          body: message.body,
        },
      },
      'outbox message (no SMTP_URL configured: logged and kept in the database)',
    );
    await finishMessage(db, id, { status: 'logged', attempts, at: ctx.clock.now() });
    return;
  }
  try {
    await transportFor(ctx.config, smtpUrl).sendMail({
      from,
      to: message.recipient,
      subject: message.subject,
      text: message.body,
    });
    await finishMessage(db, id, { status: 'sent', attempts, at: ctx.clock.now() });
  } catch (error) {
    log.warn({ err: error, outboxId: id }, 'outbox message not delivered');
    await finishMessage(db, id, {
      status: 'failed',
      attempts,
      error: (error as Error).message.slice(0, 1000),
      at: ctx.clock.now(),
    });
  }
}

/**
 * Retries what is still undelivered (a failed SMTP server, a process that stopped before
 * delivering); run by the periodic outbox job. Returns how many messages it tried. Several
 * workers may run it: a message is claimed before it is sent, so none is sent twice at once.
 */
export async function deliverUndeliveredMessages(
  ctx: OutboxContext,
  log: FastifyBaseLogger,
): Promise<number> {
  const now = ctx.clock.now();
  const ids = await listUndelivered(
    ctx.database.db,
    MAX_DELIVERY_ATTEMPTS,
    new Date(now.getTime() - STALE_SENDING_MS),
  );
  for (const id of ids) await deliverMessage(ctx, id, log);
  return ids.length;
}

function transportFor(config: Config, smtpUrl: string): Transporter {
  let transport = transports.get(config);
  if (!transport) {
    transport = nodemailer.createTransport({
      url: smtpUrl,
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 30_000,
    });
    transports.set(config, transport);
  }
  return transport;
}
