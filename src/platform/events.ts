import type { FastifyBaseLogger } from 'fastify';

/**
 * The business events an operator follows in the log (docs/OPERATIONS.md, "Events in the log"):
 * one structured line each, `event` naming it, at `info`. Fields name what it touched (ids,
 * owner/slug, version, amounts as decimal strings), never a secret, signature, key or token.
 */
export type BusinessEvent =
  | 'creator.registered'
  | 'listing.published'
  | 'listing.retired'
  | 'push.received'
  | 'release.cut'
  | 'purchase.granted'
  | 'settlement.decided'
  | 'payout.sent'
  | 'payout.failed'
  | 'payout.held'
  | 'payout.resolved'
  | 'chain.reconciled'
  | 'chain.sale_unattributed'
  | 'chain.transfer_out_unresolved'
  | 'sale.resolved'
  | 'operator.command';

export function logEvent(
  log: FastifyBaseLogger,
  event: BusinessEvent,
  fields: Record<string, unknown>,
): void {
  log.info({ event, ...fields }, event);
}
