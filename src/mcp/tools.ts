import type { Address } from 'viem';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { nextWalletChallenge, walletChallengeOffer } from '../identity/wallet-signature.js';
import { ManifestSchema, ReleaseSchema } from '../listings/schemas.js';
import { AppError } from '../platform/errors.js';
import { SKILL_PATH } from '../platform/http/discovery-links.js';
import { formatMicroUsdc, MicroUsdc } from '../platform/money/money.js';
import { findManifest, listingUrls } from '../public/manifest.js';
import { buyLatest } from '../purchases/buy.js';
import { offerFor } from '../purchases/pricing.js';
import { GrantSchema, PaymentRequiredSchema, VersionStatusSchema } from '../purchases/schemas.js';
import { fetchOwnedVersion, type VersionSale, versionSaleOf } from '../purchases/service.js';
import { versionStatus } from '../purchases/version-status.js';
import { publicReleaseLog } from '../releases/service.js';
import { defineTool, type McpTool } from './tool.js';

/** The buy-side tools, each calling the same service function as the HTTP route it wraps. */

const Listing = {
  owner: z.string().min(1).max(64).describe('The creator handle, the first part of <owner>/<slug>'),
  slug: z.string().min(1).max(64).describe('The listing slug'),
};
const WalletSignature = z
  .string()
  .min(1)
  .max(4096)
  .describe(
    'X-Wallet-Signature value: standard base64 of the JSON {"address","nonce","signature"}, signing (EIP-191 personal_sign) the `message` of a wallet_ownership challenge; call this tool with `address` and no wallet_signature to be given one (or GET /api/auth/challenge). Each works once',
  );
const WalletAddress = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, 'a 0x-prefixed 20-byte hex address')
  .describe(
    'Your wallet address. Sent without wallet_signature, the result carries `wallet_challenge`: a fresh wallet_ownership challenge for this address to sign and send back as wallet_signature',
  );

/** A fresh `wallet_ownership` challenge, with what to do with it, for a tool called without a signature. */
const WalletChallengeSchema = z.object({
  address: z.string(),
  nonce: z.string(),
  message: z.string(),
  expires_at: z.iso.datetime(),
  argument: z.literal('wallet_signature'),
  how: z.string(),
});
type WalletChallenge = z.infer<typeof WalletChallengeSchema>;

async function walletChallenge(ctx: AppContext, address: string): Promise<WalletChallenge> {
  return {
    ...(await walletChallengeOffer(ctx, address as Address)),
    argument: 'wallet_signature',
    how:
      'Sign `message` verbatim with EIP-191 personal_sign (viem: account.signMessage({ message })) using this address, ' +
      'then call the tool again with wallet_signature = standard base64 of the JSON {"address","nonce","signature"}. ' +
      'The challenge expires in 5 minutes and works once; every answer to a call that names your wallet carries the next one.',
  };
}

/**
 * The challenge for the next call of the wallet a call names (its `address`, or the address inside
 * its `wallet_signature`), as every answer of the wallet tools carries it; nothing when it names none.
 */
async function nextChallenge(
  ctx: AppContext,
  args: { address?: string; wallet_signature?: string },
): Promise<{ wallet_challenge?: WalletChallenge }> {
  const next = await nextWalletChallenge(ctx, { header: args.wallet_signature, address: args.address });
  return next ? { wallet_challenge: await walletChallenge(ctx, next.address) } : {};
}

/**
 * A tool that needs a wallet signature was called without one: `invalid_signature` carrying a
 * challenge, and `sale`'s words and details when the tool asked for a version.
 */
async function signatureNeeded(
  ctx: AppContext,
  tool: string,
  address: string | undefined,
  sale?: VersionSale,
): Promise<AppError> {
  const told = sale ? ` ${sale.sentence}` : '';
  if (!address) {
    return new AppError('invalid_signature', {
      message: `${tool} needs wallet_signature (a signed wallet_ownership challenge). Call ${tool} again with \`address\` (your wallet address) and no wallet_signature to be given a challenge to sign.${told}`,
      details: sale?.details,
    });
  }
  return new AppError('invalid_signature', {
    message: `${tool} needs wallet_signature: sign details.wallet_challenge.message with ${address} and call ${tool} again with wallet_signature (details.wallet_challenge.how says how to encode it).${told}`,
    details: { ...sale?.details, wallet_challenge: await walletChallenge(ctx, address) },
  });
}

const howToBuy = defineTool(
  'how_to_buy',
  {
    title: 'How to buy a listing',
    description:
      'Free, no wallet: whether the listing is for sale, its price and update price, and where to buy (page, skill, HTTP endpoint, this MCP server).',
    input: z.object(Listing),
    output: z.object({
      owner: z.string(),
      slug: z.string(),
      for_sale: z.boolean(),
      version: z.string(),
      price_micro: MicroUsdc,
      update_price_micro: MicroUsdc,
      listing_url: z.string(),
      manifest_url: z.string(),
      resource_endpoint: z.string(),
      skill_url: z.string(),
      mcp_url: z.string(),
      steps: z.array(z.string()),
    }),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  },
  async (ctx, { owner, slug }) => {
    const { listing, release } = await findManifest(ctx, owner, slug);
    const urls = listingUrls(ctx.config.baseUrl, listing.owner, listing.slug);
    const forSale = listing.status === 'published' && !listing.suspendedAt;
    const offer = offerFor(listing, release.version);
    return {
      owner: listing.owner,
      slug: listing.slug,
      for_sale: forSale,
      version: release.version,
      price_micro: formatMicroUsdc(offer.amountMicro),
      update_price_micro: formatMicroUsdc(offer.updatePriceMicro),
      listing_url: urls.page,
      manifest_url: urls.manifest,
      resource_endpoint: urls.resource,
      skill_url: `${ctx.config.baseUrl}${SKILL_PATH}`,
      mcp_url: `${ctx.config.baseUrl}/api/mcp`,
      steps: forSale
        ? [
            `Read the manifest: get_listing, or GET ${urls.manifest}.`,
            'Call purchase without payment_signature: it returns the x402 payment-required body (a paywall, not an error).',
            "Sign accepts[0] as an EIP-3009 TransferWithAuthorization (the official x402 client's exact EVM scheme does it) and base64 the payment payload.",
            'Call purchase again with payment_signature and quote_id (extra.quote_id): the grant carries download_url, valid 5 minutes.',
            "Check the zip against artifact_sha256, then verify it against the grant's attestation_url (a signed in-toto statement) with the keys at /.well-known/repo402-keys.json, using the curl, jq and openssl steps of /docs/buying (section 4) or repo402 verify <zip> <attestation> --expect <owner>/<slug>@<version> --key <keys>.",
            'Later, fetch_release with a wallet_signature re-fetches any version you own, free.',
          ]
        : [
            listing.suspendedAt
              ? `This listing is suspended by the operator (${listing.suspensionReason ?? ''}): it is not sold while that lasts.`
              : 'This listing is retired: it is no longer sold.',
            'Holders re-fetch the versions they own with fetch_release and a wallet_signature.',
          ],
    };
  },
);

const ListingWithLog = ManifestSchema.extend({
  release_log: ManifestSchema.shape.release_log
    .extend({
      releases: z.array(ReleaseSchema),
      next_cursor: z.string().nullable(),
    })
    .describe(
      "The manifest's release_log with the log's first page (GET /api/v/{owner}/{slug}/releases): every release, newest first, failing ones included with their verdict; `next_cursor` pages on over HTTP",
    ),
});

const getListing = defineTool(
  'get_listing',
  {
    title: 'Read the manifest',
    description:
      "The free manifest of <owner>/<slug> (GET /api/label): computed fields (tree, languages, dependencies, licence, security scan with capabilities) apart from the self-reported description and trigger hint, plus `release_log`, the release log's first page (every release, failing ones too), and `advisory_flag` when advisories published after the scan match the release's dependencies. The version on sale is the newest release that passed its scan.",
    input: z.object(Listing),
    output: ListingWithLog,
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  },
  async (ctx, { owner, slug }) => {
    const { manifest, listing } = await findManifest(ctx, owner, slug);
    const { body: log } = await publicReleaseLog(ctx, listing.owner, listing.slug);
    return {
      ...(manifest as z.infer<typeof ManifestSchema>),
      release_log: {
        ...(manifest as z.infer<typeof ManifestSchema>).release_log,
        releases: log.releases,
        next_cursor: log.next_cursor,
      },
    };
  },
);

const checkVersion = defineTool(
  'check_version',
  {
    title: 'Check the latest version',
    description:
      'The latest version and prices of <owner>/<slug> (GET /api/v), with `advisory_flag` when advisories published after its scan match its dependencies. With wallet_signature also owned, entitled, price_kind, `flagged_holdings` (held versions such advisories flag) and `yanked_holdings` (held versions the operator yanked: no longer served; the version on sale is then free to that wallet, `price_kind` `free`). `suspended` says why a listing is not for sale.',
    input: z.object({
      ...Listing,
      wallet_signature: WalletSignature.optional(),
      address: WalletAddress.optional(),
    }),
    output: VersionStatusSchema.extend({ wallet_challenge: WalletChallengeSchema.optional() }),
    annotations: { readOnlyHint: false, openWorldHint: false },
  },
  async (ctx, { owner, slug, wallet_signature, address }) => {
    const status = await versionStatus(ctx, { owner, slug, walletSignature: wallet_signature });
    return { ...status, ...(await nextChallenge(ctx, { address, wallet_signature })) };
  },
);

/**
 * Structured content must be one object: a grant when paid (or free, or owned), the payment-required
 * body when not. `x402Version` present means "sign accepts[0] and call again".
 */
const PurchaseResult = PaymentRequiredSchema.partial()
  .extend(GrantSchema.partial().shape)
  .extend({ wallet_challenge: WalletChallengeSchema.optional() })
  .meta({
    id: 'McpPurchaseResult',
    description:
      'Either the grant (download_url, …) or the payment-required body (x402Version, accepts, extra)',
  });

const purchase = defineTool(
  'purchase',
  {
    title: 'Buy (or fetch) the latest release',
    description: (network) =>
      `Wraps GET /api/r/{owner}/{slug}. Without payment_signature it returns the x402 payment-required body as structured content; sign accepts[0] (EIP-3009, exact scheme, ${network.caip2}) and call again with payment_signature (base64 payment payload) and quote_id (extra.quote_id). Returns the grant with a 5-minute download_url once settled on chain.`,
    input: z.object({
      ...Listing,
      payment_signature: z
        .string()
        .min(1)
        .max(16_384)
        .optional()
        .describe('base64 x402 v2 payment payload for accepts[0] (the PAYMENT-SIGNATURE header value)'),
      quote_id: z.string().min(1).max(4096).optional().describe('extra.quote_id of the 402 being paid'),
      wallet_signature: WalletSignature.optional().describe(
        'Optional: identifies a holder before paying (owned versions and paid-up updates are granted at once; holders of an earlier version are quoted the update price). Without it, send `address` to be given a challenge to sign',
      ),
      address: WalletAddress.optional(),
    }),
    output: PurchaseResult,
    annotations: { readOnlyHint: false, idempotentHint: false, openWorldHint: true },
  },
  async (ctx, args, caller) => {
    const result = await buyLatest(ctx, {
      owner: args.owner,
      slug: args.slug,
      paymentSignature: args.payment_signature,
      quoteId: args.quote_id,
      walletSignature: args.wallet_signature,
      source: 'mcp',
      country: caller.country,
    });
    const body: object = result.status === 'granted' ? result.grant : result.paymentRequired.body;
    return { ...body, ...(await nextChallenge(ctx, args)) } as z.infer<typeof PurchaseResult>;
  },
);

const fetchRelease = defineTool(
  'fetch_release',
  {
    title: 'Re-fetch an owned version',
    description:
      'Wraps GET /api/r/{owner}/{slug}/v/{version}: a fresh 5-minute download_url for a version the signing wallet owns, free, also after the listing is retired. Needs wallet_signature; called with `address` and without it, the error carries details.wallet_challenge to sign.',
    input: z.object({
      ...Listing,
      version: z.string().min(1).max(40).describe('X.Y.Z'),
      wallet_signature: WalletSignature.optional(),
      address: WalletAddress.optional(),
    }),
    output: GrantSchema.extend({ wallet_challenge: WalletChallengeSchema.optional() }),
    annotations: { readOnlyHint: false, openWorldHint: false },
  },
  async (ctx, { owner, slug, version, wallet_signature, address }, caller) => {
    if (wallet_signature === undefined) {
      const sale = await versionSaleOf(ctx, { owner, slug, version }, 'mcp');
      throw await signatureNeeded(ctx, 'fetch_release', address, sale);
    }
    const grant = await fetchOwnedVersion(ctx, {
      owner,
      slug,
      version,
      walletSignature: wallet_signature,
      country: caller.country,
      via: 'mcp',
    });
    return { ...grant, ...(await nextChallenge(ctx, { address, wallet_signature })) };
  },
);

export const MCP_TOOLS: McpTool[] = [howToBuy, getListing, checkVersion, purchase, fetchRelease];
