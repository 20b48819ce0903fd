import { z } from 'zod';
import { attestationUrl } from '../attestations/urls.js';
import type { AppContext } from '../context.js';
import { listingNamesById } from '../listings/service.js';
import { AppError } from '../platform/errors.js';
import { signToken, verifyToken } from '../platform/signed-token.js';
import type { Release } from '../releases/service.js';
import type { Grant, GrantKind } from './schemas.js';

/** What granting a release reads of it. */
export type GrantableRelease = Pick<
  Release,
  'id' | 'listingId' | 'version' | 'artifactKey' | 'artifactSha256' | 'sizeBytes'
>;

/**
 * Grants (DESIGN.md item 9): a download URL that lives 5 minutes. Locally it is
 * `{base_url}/api/download/<token>` with an HMAC-signed token naming the release; with S3 it is a
 * presigned GET URL of the same lifetime.
 */

export const GRANT_LIFETIME_SECONDS = 300;
const KIND = 'd1';

export async function grantFor(
  ctx: AppContext,
  release: GrantableRelease,
  extras: {
    kind: GrantKind;
    purchaseId?: string;
    transaction?: string;
    /** The release's listing names, when the caller has just read them (the paying request). */
    listing?: { owner: string; slug: string };
  },
): Promise<Grant> {
  const expiresAt = new Date(ctx.clock.now().getTime() + GRANT_LIFETIME_SECONDS * 1000);
  const downloadUrl = ctx.blobs.presignGet
    ? await ctx.blobs.presignGet(release.artifactKey, GRANT_LIFETIME_SECONDS)
    : `${ctx.config.baseUrl}/api/download/${signToken(ctx.appSecret, KIND, {
        l: release.listingId,
        v: release.version,
        e: Math.floor(expiresAt.getTime() / 1000),
      })}`;
  const listing =
    extras.listing ?? (await listingNamesById(ctx.database.db, [release.listingId])).get(release.listingId)!;
  return {
    download_url: downloadUrl,
    expires_at: expiresAt.toISOString(),
    version: release.version,
    artifact_sha256: release.artifactSha256,
    size_bytes: release.sizeBytes,
    kind: extras.kind,
    attestation_url: attestationUrl(ctx.config.baseUrl, listing.owner, listing.slug, release.version),
    ...(extras.purchaseId ? { purchase_id: extras.purchaseId } : {}),
    ...(extras.transaction ? { transaction: extras.transaction } : {}),
  };
}

const TokenShape = z.object({ l: z.string(), v: z.string(), e: z.number().int() });

/**
 * The release a download token names; `404` for one we did not sign. An expired one is named too
 * (`expired: true`): the caller answers `expired_authorization` with the re-fetch that replaces it.
 */
export function readDownloadToken(
  ctx: AppContext,
  token: string,
): { listingId: string; version: string; expired: boolean; expiredAt: Date } {
  const payload = verifyToken(ctx.appSecret, KIND, token, TokenShape);
  if (!payload) throw new AppError('not_found', { message: 'No such download; take a fresh grant' });
  const expiredAt = new Date(payload.e * 1000);
  return {
    listingId: payload.l,
    version: payload.v,
    expired: expiredAt.getTime() <= ctx.clock.now().getTime(),
    expiredAt,
  };
}
