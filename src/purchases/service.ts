import type { Readable } from 'node:stream';
import type { Address } from 'viem';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { verifyWalletSignatureHeader } from '../identity/wallet-signature.js';
import { listingById, listingNamesById } from '../listings/service.js';
import { decodeCursor, encodeCursor } from '../platform/cursor.js';
import { AppError, isAppError, sentences, VERSIONS_SOLD } from '../platform/errors.js';
import { assertCountryAllowed } from '../platform/limits/compliance.js';
import { openArtifact, publishedRelease } from '../releases/service.js';
import { resourceUrl } from '../x402/resource-url.js';
import { grantFor, readDownloadToken } from './grants.js';
import { holdingOf, isEntitled } from './holdings.js';
import { cachedSaleHead, findListingForSale } from './sale-heads.js';
import type { Entitlements, Grant } from './schemas.js';
import { entitlementPage, holderCounts } from './store.js';

/**
 * What was bought, as the purchase routes and the MCP tools ask it, with plain values (header
 * strings, the caller's country), never a request: holders re-fetch owned versions, list what they
 * own and download a grant here. Buying itself is the checkout's (`src/checkout/`).
 */

/**
 * GET /api/r/{owner}/{slug}/v/{version}: a fresh grant for a version the wallet holds, retired or
 * not. A refusal (no or a bad signature, a version not owned) says whether the version is sold and
 * where the version on sale is, so a buyer asking for an older one learns at once that it cannot be
 * bought.
 */
export async function fetchOwnedVersion(
  ctx: AppContext,
  request: {
    owner: string;
    slug: string;
    version: string;
    /** `X-Wallet-Signature`. */
    walletSignature: string | undefined;
    /** The caller's country (`requestCountry`), for the jurisdiction check. */
    country?: string;
    /** Which transport asks: a refusal names the way to buy in its terms. */
    via?: BuyingVia;
  },
): Promise<Grant> {
  assertCountryAllowed(ctx.config.compliance, request.country);
  const { listing, release } = await ownedVersionTarget(ctx, request);
  assertNotYanked(ctx, release, listing);
  const sale = () => versionSale(ctx, listing, release.version, request.via ?? 'http');
  let wallet: Address;
  try {
    wallet = await verifyWalletSignatureHeader(ctx, request.walletSignature);
  } catch (error) {
    throw isAppError(error) ? toldOfSale(error, await sale()) : error;
  }
  const holding = await holdingOf(ctx.database, wallet, listing.id);
  if (!isEntitled(holding, release.version)) {
    const refusal = new AppError('not_entitled', {
      message: `The wallet ${wallet} does not own ${listing.owner}/${listing.slug} ${release.version}`,
    });
    throw toldOfSale(refusal, await sale());
  }
  return grantFor(ctx, release, { kind: 'owned' });
}

async function ownedVersionTarget(ctx: AppContext, named: { owner: string; slug: string; version: string }) {
  const listing = await findListingForSale(ctx.database.db, named.owner, named.slug);
  const release = listing && (await publishedRelease(ctx.database.db, listing.id, named.version));
  if (!listing || !release) throw new AppError('not_found', { message: 'No such listing or version' });
  return { listing, release };
}

/**
 * `410 release_yanked` for a release the operator yanked: neither served nor sold. The answer
 * names the reason and where a holder gets the newest passing release free.
 */
export function assertNotYanked(
  ctx: Pick<AppContext, 'config'>,
  release: { version: string; yankedAt: Date | null; yankReason: string | null },
  listing: { owner: string; slug: string },
): void {
  if (!release.yankedAt) return;
  const resource = resourceUrl(ctx.config.baseUrl, listing.owner, listing.slug);
  throw new AppError('release_yanked', {
    message: `${listing.owner}/${listing.slug} ${release.version} was yanked by the operator: ${release.yankReason ?? ''}. It is no longer served; a wallet that holds it gets the newest passing release free from GET ${resource} with its X-Wallet-Signature`,
    details: {
      version: release.version,
      reason: release.yankReason ?? '',
      yanked_at: release.yankedAt?.toISOString(),
      resource_url: resource,
    },
  });
}

/** Whether a version is the one on sale, and where that is, in words and as `details`. */
export interface VersionSale {
  sentence: string;
  details: { version: string; for_sale: boolean; version_on_sale?: string; resource_url?: string };
}

/** How a buyer reaches the service: the way to buy is named in its terms. */
export type BuyingVia = 'http' | 'mcp';

/** `versionSale` for a listing and version named by a caller (MCP's `fetch_release`); `404` as the route. */
export async function versionSaleOf(
  ctx: AppContext,
  named: { owner: string; slug: string; version: string },
  via: BuyingVia,
): Promise<VersionSale> {
  const { listing, release } = await ownedVersionTarget(ctx, named);
  return versionSale(ctx, listing, release.version, via);
}

async function versionSale(
  ctx: AppContext,
  listing: {
    owner: string;
    slug: string;
    status: string;
    suspendedAt?: Date | null;
    suspensionReason?: string | null;
  },
  version: string,
  via: BuyingVia,
): Promise<VersionSale> {
  if (listing.suspendedAt) {
    return {
      sentence: `${listing.owner}/${listing.slug} is suspended by the operator: ${listing.suspensionReason ?? ''}. Nothing is sold while it lasts; a wallet re-fetches any version it owns, free.`,
      details: { version, for_sale: false },
    };
  }
  const head = listing.status === 'published' ? await cachedSaleHead(ctx, listing.owner, listing.slug) : null;
  const onSale = head?.release.version;
  if (!onSale) {
    return {
      sentence: `${listing.owner}/${listing.slug} is not sold now; a wallet re-fetches any version it owns, free, forever.`,
      details: { version, for_sale: false },
    };
  }
  const url = resourceUrl(ctx.config.baseUrl, listing.owner, listing.slug);
  const quote = via === 'mcp' ? 'the purchase tool quotes its price' : `GET ${url} quotes its price`;
  return {
    sentence:
      onSale === version
        ? `${version} is the version on sale: ${quote}.`
        : `${version} is not for sale. ${VERSIONS_SOLD} The version on sale is ${onSale}: ${quote}.`,
    details: { version, for_sale: onSale === version, version_on_sale: onSale, resource_url: url },
  };
}

function toldOfSale(error: AppError, sale: VersionSale): AppError {
  return new AppError(error.code, {
    message: sentences(error.message, sale.sentence),
    details: { ...error.details, ...sale.details },
    headers: error.headers,
  });
}

const ENTITLEMENTS_PAGE_SIZE = 50;
const CursorShape = z.object({ c: z.string(), l: z.string().uuid(), v: z.string() });

/** GET /api/entitlements: everything the signing wallet holds, newest first. */
export async function listEntitlements(
  ctx: AppContext,
  request: { walletSignature: string | undefined; cursor?: string; limit?: number },
): Promise<Entitlements> {
  const wallet = await verifyWalletSignatureHeader(ctx, request.walletSignature);
  const limit = request.limit ?? ENTITLEMENTS_PAGE_SIZE;
  const after = request.cursor ? decodeCursor(request.cursor, CursorShape) : undefined;
  const rows = await entitlementPage(
    ctx.database.db,
    wallet.toLowerCase(),
    after && { createdAt: new Date(after.c), listingId: after.l, version: after.v },
    limit + 1,
  );
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  const names = await listingNamesById(
    ctx.database.db,
    page.map((row) => row.listingId),
  );
  return {
    wallet,
    items: page.map((row) => {
      // Every entitlement's listing exists: the foreign key keeps listing rows.
      const { owner, slug } = names.get(row.listingId)!;
      return {
        owner,
        slug,
        version: row.version,
        kind: row.kind,
        all_versions: row.allVersions,
        purchase_id: row.purchaseId,
        transaction: row.transaction,
        acquired_at: row.createdAt.toISOString(),
        fetch_url: `${resourceUrl(ctx.config.baseUrl, owner, slug)}/v/${row.version}`,
      };
    }),
    next_cursor:
      rows.length > limit && last
        ? encodeCursor({ c: last.createdAt.toISOString(), l: last.listingId, v: last.version })
        : null,
  };
}

/** GET /api/download/{token}: the zip a grant names, with the file name it is saved under. */
export async function openDownload(
  ctx: AppContext,
  token: string,
): Promise<{ stream: Readable; sizeBytes: number; fileName: string; artifactSha256: string }> {
  const { listingId, version, expired, expiredAt } = readDownloadToken(ctx, token);
  const [release, listing] = await Promise.all([
    publishedRelease(ctx.database.db, listingId, version),
    listingById(ctx.database.db, listingId),
  ]);
  if (!release || !listing) throw new AppError('not_found', { message: 'No such download' });
  assertNotYanked(ctx, release, listing);
  if (expired) {
    // Not "you do not own this": the grant was good and lapsed. The code is SPEC's
    // `expired_authorization` (docs/DECISIONS.md); no payment is asked, a re-fetch replaces it.
    const refetch = `${resourceUrl(ctx.config.baseUrl, listing.owner, listing.slug)}/v/${release.version}`;
    throw new AppError('expired_authorization', {
      message:
        `This download URL expired at ${expiredAt.toISOString()} (download URLs live 5 minutes). It is not a payment request: ` +
        `get a fresh download_url with GET ${refetch} and an X-Wallet-Signature of the wallet that owns ${release.version} ` +
        `(MCP: fetch_release with wallet_signature); a free or owned version is also granted again by GET ${resourceUrl(ctx.config.baseUrl, listing.owner, listing.slug)}.`,
    });
  }
  const { stream, sizeBytes } = await openArtifact(ctx, release);
  // The zip's own top folder is `<slug>/` (identical trees, identical zips); the name carries the version.
  return {
    stream,
    sizeBytes,
    fileName: `${listing.slug}-${release.version}.zip`,
    artifactSha256: release.artifactSha256,
  };
}

/**
 * How many wallets hold a version of the listing, and how many of them bought while updates were
 * included (they receive every later version free, whatever the update price).
 */
export function holdersOf(ctx: Pick<AppContext, 'database'>, listingId: string) {
  return holderCounts(ctx.database.db, listingId);
}
