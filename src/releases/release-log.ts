import { z } from 'zod';
import type { Db } from '../db/connect.js';
import { findPublicListing } from '../listings/public-listings.js';
import { decodeCursor, encodeCursor } from '../platform/cursor.js';
import { AppError } from '../platform/errors.js';
import { releasePage } from './store.js';
import { parseVersion, VERSION_PATTERN } from './versions.js';
import { type ReleaseBody, releaseBody } from './views.js';

export const RELEASE_LOG_PAGE_SIZE = 50;
const LogCursor = z.strictObject({ v: z.string().regex(VERSION_PATTERN) });

export interface ReleaseLogPage {
  owner: string;
  slug: string;
  status: 'published' | 'retired';
  releases: ReleaseBody[];
  nextCursor: string | null;
}

/**
 * The public release log: every release, failing and pending ones too, newest version first.
 * Drafts and unknown listings are both `404`; a retired listing keeps its log.
 */
export async function releaseLog(
  db: Db,
  owner: string,
  slug: string,
  cursor?: string,
): Promise<ReleaseLogPage> {
  const listing = await findPublicListing(db, owner, slug);
  if (!listing) throw new AppError('not_found', { message: 'No such listing' });
  const before = cursor ? parseVersion(decodeCursor(cursor, LogCursor).v) : undefined;
  const rows = await releasePage(db, listing.id, RELEASE_LOG_PAGE_SIZE + 1, before);
  const page = rows.slice(0, RELEASE_LOG_PAGE_SIZE);
  return {
    owner: listing.owner,
    slug: listing.slug,
    status: listing.status,
    releases: page.map(releaseBody),
    nextCursor: rows.length > RELEASE_LOG_PAGE_SIZE ? encodeCursor({ v: page.at(-1)!.version }) : null,
  };
}
