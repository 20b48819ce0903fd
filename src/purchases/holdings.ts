import type { Database } from '../db/connect.js';
import { compareVersions } from '../platform/versions.js';
import { readHolding } from './store.js';

/** What a wallet holds of one listing: versions it bought, and where `all_versions` purchases start. */
export interface Holding {
  versions: string[];
  /** The lowest version bought with `all_versions`: it and every later version are held. */
  allVersionsFrom?: string;
  /** The versions held that the operator yanked since. */
  yanked: string[];
}

export async function holdingOf(database: Database, wallet: string, listingId: string): Promise<Holding> {
  return holdingFrom(await readHolding(database, wallet.toLowerCase(), listingId));
}

/** The holding of the versions a wallet is entitled to and those it bought with `all_versions`. */
export function holdingFrom(read: { versions: string[]; allVersions: string[]; yanked: string[] }): Holding {
  return {
    versions: read.versions,
    allVersionsFrom: read.allVersions.sort(compareVersions)[0],
    yanked: read.yanked,
  };
}

/**
 * The wallet's newest held version when the operator yanked it: the wallet is owed the release on
 * sale free, once (granting it makes that the newest held, and it is not yanked). Else undefined.
 */
export function owedReplacement(holding: Holding): string | undefined {
  const newest = [...holding.versions].sort(compareVersions).at(-1);
  return newest !== undefined && holding.yanked.includes(newest) ? newest : undefined;
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
