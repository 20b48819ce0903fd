import { z } from 'zod';
import { formatMicroUsdc, parseMicroUsdc } from '../platform/money/money.js';
import { signToken, verifyToken } from '../platform/signed-token.js';

/**
 * Quotes (DESIGN.md item 7): what a 402 offered, signed into `extra.quote_id` so the paying
 * request can be checked against it without the 402 path writing anything. A quote is current
 * while unexpired and the listing's price, version and the payer's kind still match it.
 */

export interface Quote {
  listingId: string;
  version: string;
  kind: 'new' | 'update';
  fromVersion?: string;
  amountMicro: bigint;
  /** The update price in force when quoted: `0` makes the (paid) purchase `all_versions`. */
  updatePriceMicro: bigint;
  expiresAt: Date;
}

const QuoteShape = z.object({
  l: z.string(),
  v: z.string(),
  k: z.enum(['new', 'update']),
  f: z.string().optional(),
  a: z.string().regex(/^[0-9]{1,16}$/),
  u: z.string().regex(/^[0-9]{1,16}$/),
  e: z.number().int(),
});

const KIND = 'q1';

export function signQuote(appSecret: Buffer, quote: Quote): string {
  return signToken(appSecret, KIND, {
    l: quote.listingId,
    v: quote.version,
    k: quote.kind,
    f: quote.fromVersion,
    a: formatMicroUsdc(quote.amountMicro),
    u: formatMicroUsdc(quote.updatePriceMicro),
    e: Math.floor(quote.expiresAt.getTime() / 1000),
  });
}

/** The quote a `quote_id` stands for; undefined when it is not one we signed. */
export function readQuote(appSecret: Buffer, token: string): Quote | undefined {
  const q = verifyToken(appSecret, KIND, token, QuoteShape);
  if (!q) return undefined;
  return {
    listingId: q.l,
    version: q.v,
    kind: q.k,
    fromVersion: q.f,
    amountMicro: parseMicroUsdc(q.a),
    updatePriceMicro: parseMicroUsdc(q.u),
    expiresAt: new Date(q.e * 1000),
  };
}

/** Whether `quote` still describes what `offer` would quote now. */
export function quoteIsCurrent(quote: Quote, offer: Omit<Quote, 'expiresAt'>, now: Date): boolean {
  return (
    quote.expiresAt > now &&
    quote.listingId === offer.listingId &&
    quote.version === offer.version &&
    quote.kind === offer.kind &&
    quote.fromVersion === offer.fromVersion &&
    quote.amountMicro === offer.amountMicro &&
    quote.updatePriceMicro === offer.updatePriceMicro
  );
}
