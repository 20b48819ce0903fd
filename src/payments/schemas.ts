import { z } from 'zod';
import { AdvisoryFlagSchema, ReleaseSchema } from '../listings/schemas.js';
import { MicroUsdc } from '../platform/money.js';
import { singleLineText } from '../platform/text-fields.js';
import { UpdateChangesSchema } from '../releases/schemas.js';

/**
 * The payments wire: request headers and every body the buy, version-status, entitlement and
 * download routes answer (the MCP tools answer the same), and the creator's reads of its sales,
 * ledger and payouts. TypeScript types come from these.
 */

export const GrantSchema = z
  .object({
    download_url: z.string().meta({ description: 'Signed URL, valid 5 minutes' }),
    expires_at: z.iso.datetime(),
    version: z.string(),
    artifact_sha256: z.string(),
    size_bytes: z.number().int(),
    kind: z.enum(['new', 'update', 'free', 'owned']),
    attestation_url: z.string().meta({
      description:
        'The signed attestation of this zip (in-toto Statement v1 in a DSSE envelope): verify the download against it, offline (docs/ATTESTATIONS.md)',
    }),
    purchase_id: z.string().optional(),
    transaction: z.string().optional().meta({ description: 'Settlement transaction hash' }),
  })
  .meta({ id: 'ResourceGrant' });
export type Grant = z.infer<typeof GrantSchema>;
/** `new`/`update` after a payment, `free` for a price of zero, `owned` for a holder's re-fetch. */
export type GrantKind = Grant['kind'];

export const PaymentRequiredSchema = z
  .looseObject({
    x402Version: z.literal(2),
    resource: z.looseObject({ url: z.string(), description: z.string(), mimeType: z.string() }),
    accepts: z.array(z.looseObject({})),
    extra: z.looseObject({
      kind: z.enum(['new', 'update']),
      version: z.string(),
      quote_id: z.string(),
      releases: z.array(ReleaseSchema).optional().meta({
        description:
          'kind `update`: every release after the held version up to the one on sale, oldest first, failing ones included with their verdict',
      }),
      changes: UpdateChangesSchema.optional().meta({
        description: 'kind `update`: the cumulative change from the held version to the one on sale',
      }),
    }),
    extensions: z.looseObject({}),
  })
  .meta({
    id: 'PaymentRequired',
    description: "SPEC.md's payment-required body; also base64 in PAYMENT-REQUIRED",
  });

export const BuyHeaders = z.looseObject({
  'payment-signature': z.string().optional().meta({ description: 'base64 x402 v2 payment payload' }),
  'x-quote-id': z.string().optional().meta({ description: 'extra.quote_id of the 402 being paid' }),
  'x-wallet-signature': z.string().optional(),
});
export const WalletHeaders = z.looseObject({ 'x-wallet-signature': z.string().optional() });

export const VersionParams = z.object({ version: z.string().meta({ description: 'X.Y.Z' }) });

/**
 * `?address=` on a wallet route: the wallet the request is for. It reveals nothing: a refusal
 * (`401 invalid_signature`, `403 not_entitled`) then carries a fresh challenge for that wallet in
 * `details.wallet_challenge`, so the signed retry needs no request for a challenge first. The
 * address inside an `X-Wallet-Signature` does the same.
 */
const WalletAddressParam = z
  // Any value is taken (a wallet route never refuses a request for its query), but only one
  // address names a wallet.
  .union([z.string(), z.array(z.string())])
  .optional()
  .meta({
    description:
      'Your wallet address (0x and 40 hex digits): a refusal then carries a fresh wallet_ownership challenge for it (details.wallet_challenge). Never reveals what the wallet owns; anything else names no wallet',
  });

export const WalletAddressQuery = z.looseObject({ address: WalletAddressParam });

export const EntitlementsQuery = z.object({
  cursor: z.string().max(512).optional(),
  limit: z.coerce.number().int().min(1).max(100).optional(),
  address: WalletAddressParam,
});

/** Any string: a token that is not one of ours is an unknown download (`404`), as a name that cannot exist is. */
export const DownloadParams = z.object({
  token: z.string().meta({ description: 'The signed token of a download_url' }),
});

/** A release's trust report in three numbers, as the scan stores them. */
export const ScanCountsSchema = z.object({
  blocking: z.number().int(),
  disclosed: z.number().int(),
  review: z.number().int(),
});

export const VersionStatusSchema = z
  .object({
    owner: z.string(),
    slug: z.string(),
    status: z.enum(['published', 'retired']),
    for_sale: z.boolean(),
    version: z.string().meta({
      description:
        'The version on sale: the newest release whose scan passed (newer failing or pending releases are only in the release log)',
    }),
    release_log_url: z.string().meta({
      description: 'GET /api/v/{owner}/{slug}/releases: every release, failing ones too, newest first',
    }),
    tag: z.string(),
    artifact_sha256: z.string(),
    published_at: z.iso.datetime(),
    price_micro: MicroUsdc,
    update_price_micro: MicroUsdc,
    resource_endpoint: z.string(),
    scan: ScanCountsSchema.optional().meta({
      description: "The latest release's trust report in three numbers; absent when there is none",
    }),
    advisory_flag: AdvisoryFlagSchema.optional().meta({
      description:
        'The version on sale matches a HIGH/CRITICAL or malicious advisory that arrived after its scan (absent when none)',
    }),
    owned: z.boolean().optional(),
    entitled: z.boolean().optional(),
    price_kind: z.enum(['owned', 'new', 'update', 'free']).optional(),
    flagged_holdings: z
      .array(AdvisoryFlagSchema.extend({ version: z.string() }))
      .optional()
      .meta({
        description:
          'With a wallet signature: the versions the wallet holds that advisory data arriving after their scan flags, oldest first (absent when none)',
      }),
    update: z
      .object({
        from: z.string().meta({ description: 'The newest version the wallet holds below the one on sale' }),
        to: z.string(),
        releases: z.array(ReleaseSchema).meta({
          description:
            'Every release after `from` up to `to`, oldest first, failing ones included with their verdict',
        }),
        changes: UpdateChangesSchema,
      })
      .optional()
      .meta({
        description:
          "With a wallet signature, when price_kind is `update`: what the update covers (the same as the update 402's extra.releases and extra.changes)",
      }),
  })
  .meta({ id: 'VersionStatus' });
export type VersionStatus = z.infer<typeof VersionStatusSchema>;

export const EntitlementsSchema = z
  .object({
    wallet: z.string(),
    items: z.array(
      z.object({
        owner: z.string(),
        slug: z.string(),
        version: z.string(),
        kind: z.enum(['new', 'update']),
        all_versions: z.boolean(),
        purchase_id: z.string(),
        transaction: z.string().nullable(),
        acquired_at: z.iso.datetime(),
        fetch_url: z.string(),
      }),
    ),
    next_cursor: z.string().nullable(),
  })
  .meta({ id: 'Entitlements' });
export type Entitlements = z.infer<typeof EntitlementsSchema>;

// The creator's sales, ledger and payouts (GET /api/creators/me/…).

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

const Transaction = z.string().nullable().meta({ description: 'Transaction hash on Base' });
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
