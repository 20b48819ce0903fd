import type { Db } from '../db/connect.js';
import type { Listing } from './service.js';
import { findDeployKeyForRepo, isLiveDeployKey, liveDeployKey } from './store.js';

/** The fingerprint of the listing's live deploy key, or null when it has none. */
export async function deployKeyFingerprint(db: Db, listingId: string): Promise<string | null> {
  return (await liveDeployKey(db, listingId))?.fingerprint ?? null;
}

/** Whether a key with this fingerprint may authenticate at all (it is some listing's live deploy key). */
export function isKnownDeployKey(db: Db, fingerprint: string): Promise<boolean> {
  return isLiveDeployKey(db, fingerprint);
}

/** The listing `owner/slug` when the key with `fingerprint` is its live deploy key; otherwise undefined. */
export async function listingForDeployKey(
  db: Db,
  fingerprint: string,
  owner: string,
  slug: string,
): Promise<Listing | undefined> {
  return (await findDeployKeyForRepo(db, fingerprint, owner, slug))?.listing;
}
