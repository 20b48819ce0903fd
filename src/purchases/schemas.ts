import { z } from 'zod';
import { AdvisoryFlagSchema, ReleaseSchema, YankSchema } from '../listings/schemas.js';
import { MicroUsdc } from '../platform/money/money.js';
import { UpdateChangesSchema } from '../releases/schemas.js';
import { PRICE_KINDS } from './pricing.js';

/**
 * The buyer's wire: the payment-required body (HTTP 402, also the MCP `purchase` result), the grant
 * every buy and re-fetch answers, the routes' headers and queries, version status and a wallet's
 * entitlements (the MCP tools answer the same). TypeScript types come from these.
 */

/** A fresh challenge for the wallet the request named, for its next call (`nextWalletChallenge`). */
export const WalletChallengeSchema = z
  .object({
    address: z.string(),
    nonce: z.string(),
    message: z.string().meta({ description: 'Sign verbatim (EIP-191 personal_sign) with `address`' }),
    expires_at: z.iso.datetime(),
    header: z.literal('X-Wallet-Signature'),
    how: z.string(),
  })
  .meta({
    id: 'WalletChallenge',
    description:
      'Present when the request named a wallet (its X-Wallet-Signature, or ?address=): a wallet_ownership challenge for that wallet, to sign for the next call. It works once, within 5 minutes, and says nothing of what the wallet holds',
  });

const NextChallenge = { wallet_challenge: WalletChallengeSchema.optional() };

export const GrantSchema = z.object({
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
});
export type Grant = z.infer<typeof GrantSchema>;
/** What the buy and re-fetch routes answer: the grant, and a challenge for a wallet the request named. */
export const GrantResponseSchema = GrantSchema.extend(NextChallenge).meta({ id: 'ResourceGrant' });
/** `new`/`update` after a payment, `free` for a price of zero, `owned` for a holder's re-fetch. */
export type GrantKind = Grant['kind'];

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
    ...NextChallenge,
  })
  .meta({ id: 'Entitlements' });
export type Entitlements = z.infer<typeof EntitlementsSchema>;

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
/** A release's trust report in three numbers, as the scan stores them. */
export const ScanCountsSchema = z.object({
  blocking: z.number().int(),
  disclosed: z.number().int(),
  review: z.number().int(),
});

export const VersionStatusSchema = z.object({
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
  price_kind: z.enum(PRICE_KINDS).optional(),
  flagged_holdings: z
    .array(AdvisoryFlagSchema.extend({ version: z.string() }))
    .optional()
    .meta({
      description:
        'With a wallet signature: the versions the wallet holds that advisory data arriving after their scan flags, oldest first (absent when none)',
    }),
  yanked_holdings: z
    .array(YankSchema.extend({ version: z.string() }))
    .optional()
    .meta({
      description:
        'With a wallet signature: the versions the wallet holds that the operator yanked, oldest first (absent when none). A wallet whose newest held version is yanked gets the version on sale free (`price_kind` `free`)',
    }),
  suspended: z.object({ reason: z.string(), since: z.iso.datetime() }).optional().meta({
    description:
      'Present while the operator suspends the listing (or its creator): `for_sale` is false and nothing is sold; holders still re-fetch what they own',
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
});
export type VersionStatus = z.infer<typeof VersionStatusSchema>;
/** What GET /api/v/{owner}/{slug} answers: the status, and a challenge for a wallet the request named. */
export const VersionStatusResponseSchema = VersionStatusSchema.extend(NextChallenge).meta({
  id: 'VersionStatus',
});
