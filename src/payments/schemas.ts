import { z } from 'zod';
import { MicroUsdc } from '../platform/money.js';

/**
 * The payments wire: request headers and every body the buy, version-status, entitlement and
 * download routes answer (the MCP tools answer the same). TypeScript types come from these.
 */

export const GrantSchema = z
  .object({
    download_url: z.string().meta({ description: 'Signed URL, valid 5 minutes' }),
    expires_at: z.iso.datetime(),
    version: z.string(),
    artifact_sha256: z.string(),
    size_bytes: z.number().int(),
    kind: z.enum(['new', 'update', 'free', 'owned']),
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
    extra: z.looseObject({ kind: z.enum(['new', 'update']), version: z.string(), quote_id: z.string() }),
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

export const EntitlementsQuery = z.object({
  cursor: z.string().max(512).optional(),
  limit: z.coerce.number().int().min(1).max(100).optional(),
});

export const DownloadParams = z.object({
  token: z.string().regex(/^[A-Za-z0-9._-]{1,2048}$/, 'not a download token'),
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
    version: z.string(),
    tag: z.string(),
    artifact_sha256: z.string(),
    published_at: z.iso.datetime(),
    price_micro: MicroUsdc,
    update_price_micro: MicroUsdc,
    resource_endpoint: z.string(),
    scan: ScanCountsSchema.optional().meta({
      description: "The latest release's trust report in three numbers; absent when there is none",
    }),
    owned: z.boolean().optional(),
    entitled: z.boolean().optional(),
    price_kind: z.enum(['owned', 'new', 'update', 'free']).optional(),
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
