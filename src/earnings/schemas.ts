import { z } from 'zod';
import { MicroUsdc } from '../platform/money/money.js';
import { singleLineText } from '../platform/text-fields.js';

/** The creator's reads of its money (GET /api/creators/me/…) and of who holds its listings. */

const PageCursor = singleLineText()
  .max(512)
  .optional()
  .meta({ description: 'Opaque; the `next_cursor` of the previous page' });
const PageLimit = z
  .string()
  .regex(/^(100|[1-9][0-9]?)$/, 'an integer from 1 to 100')
  .optional()
  .meta({ description: 'Page size, 1 to 100; default 50' });

export const CreatorPageQuerySchema = z.strictObject({ cursor: PageCursor, limit: PageLimit });

export const SalesQuerySchema = CreatorPageQuerySchema.extend({
  listing_id: z
    .uuid('expected a UUID')
    .optional()
    .meta({ description: "Only this listing's sales; another creator's listing is 404 like an unknown one" }),
});

export const DailySalesQuerySchema = z.strictObject({
  days: z
    .string()
    .regex(/^(36[0-6]|3[0-5][0-9]|[12][0-9]{2}|[1-9][0-9]?)$/, 'an integer from 1 to 366')
    .optional()
    .meta({ description: 'How many UTC days, ending today; 1 to 366, default 30' }),
});

const Transaction = z
  .string()
  .nullable()
  .meta({ description: 'Transaction hash on the chain paid on (Base; Base Sepolia on a testnet staging)' });
const TransactionUrl = z
  .string()
  .nullable()
  .meta({ description: "The transaction's page on a block explorer (EXPLORER_TX_URL); null without one" });

export const SaleSchema = z
  .object({
    id: z.string().meta({ description: 'The purchase id' }),
    listing: z.object({ id: z.string(), owner: z.string(), slug: z.string() }),
    buyer: z.string().meta({ description: 'The paying wallet, full lower-case 0x address' }),
    version: z.string(),
    kind: z.enum(['new', 'update']),
    from_version: z.string().nullable().meta({ description: 'The version an update was bought from' }),
    amount_micro: MicroUsdc.meta({ description: 'What the buyer paid' }),
    fee_micro: MicroUsdc.meta({ description: 'The platform fee kept' }),
    net_micro: MicroUsdc.meta({ description: "What was credited to the creator's ledger" }),
    transaction: Transaction,
    transaction_url: TransactionUrl,
    source: z.enum(['http', 'mcp']),
    created_at: z.iso.datetime(),
  })
  .meta({
    id: 'Sale',
    description: 'A paid purchase of one of the caller’s listings; free grants are not sales',
  });

export const SalesPageSchema = z
  .object({ sales: z.array(SaleSchema), next_cursor: z.string().nullable() })
  .meta({ id: 'SalesPage' });

export const DailySalesSchema = z
  .object({
    days: z.array(
      z.object({
        date: z.iso.date().meta({ description: 'UTC day, YYYY-MM-DD' }),
        sales: z.number().int(),
        amount_micro: MicroUsdc,
        net_micro: MicroUsdc,
      }),
    ),
  })
  .meta({
    id: 'DailySales',
    description: 'One entry per UTC day, zero days included, oldest first, ending today',
  });

export const LedgerSchema = z
  .object({
    balance_micro: MicroUsdc.meta({ description: 'credited − swept: what the next payout sweep pays' }),
    credited_micro: MicroUsdc.meta({ description: 'Every credit, net of fees' }),
    swept_micro: MicroUsdc.meta({ description: 'Every payout, less the ones reversed after failing' }),
    entries: z.array(
      z.object({
        id: z.string(),
        kind: z.enum(['credit', 'sweep', 'sweep_reversal']),
        amount_micro: MicroUsdc,
        fee_micro: MicroUsdc,
        purchase_id: z.string().nullable(),
        sweep_id: z.string().nullable(),
        created_at: z.iso.datetime(),
      }),
    ),
    next_cursor: z.string().nullable(),
  })
  .meta({ id: 'Ledger' });

export const PayoutSchema = z
  .object({
    id: z.string(),
    address: z.string().meta({ description: 'The payout address paid, lower case' }),
    amount_micro: MicroUsdc,
    state: z.enum(['sending', 'sent', 'failed']),
    transaction: Transaction,
    transaction_url: TransactionUrl,
    error: z.string().nullable(),
    created_at: z.iso.datetime(),
    finished_at: z.iso.datetime().nullable(),
  })
  .meta({ id: 'Payout' });

export const PayoutsPageSchema = z
  .object({ payouts: z.array(PayoutSchema), next_cursor: z.string().nullable() })
  .meta({ id: 'PayoutsPage' });

export const ListingHoldersSchema = z
  .object({
    listing_id: z.uuid(),
    holders: z.number().int().meta({ description: 'Wallets that hold a version of the listing' }),
    updates_included: z.number().int().meta({
      description:
        'Of those, wallets that bought while the update price was 0: they receive every later version free, whatever the update price is set to',
    }),
  })
  .meta({ id: 'ListingHolders' });
