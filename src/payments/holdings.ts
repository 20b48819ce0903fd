import type { Db } from '../db/connect.js';
import { compareVersions } from '../releases/versions.js';
import { allVersionsPurchases, heldVersions } from './store.js';

/** What a wallet holds of one listing: versions it bought, and where `all_versions` purchases start. */
export interface Holding {
  versions: string[];
  /** The lowest version bought with `all_versions`: it and every later version are held. */
  allVersionsFrom?: string;
}

export async function holdingOf(db: Db, wallet: string, listingId: string): Promise<Holding> {
  const key = wallet.toLowerCase();
  const [versions, stamped] = await Promise.all([
    heldVersions(db, key, listingId),
    allVersionsPurchases(db, key, listingId),
  ]);
  const allVersionsFrom = stamped.sort(compareVersions)[0];
  return { versions, allVersionsFrom };
}

export function isEntitled(holding: Holding, version: string): boolean {
  if (holding.versions.includes(version)) return true;
  return holding.allVersionsFrom !== undefined && compareVersions(version, holding.allVersionsFrom) >= 0;
}

/** The newest version held below `version`, which an update starts from. */
export function newestHeldBelow(holding: Holding, version: string): string | undefined {
  return holding.versions
    .filter((held) => compareVersions(held, version) < 0)
    .sort(compareVersions)
    .at(-1);
}
