import type { Database } from '../db/connect.js';
import { compareVersions } from '../releases/versions.js';
import { readHolding } from './store.js';

/** What a wallet holds of one listing: versions it bought, and where `all_versions` purchases start. */
export interface Holding {
  versions: string[];
  /** The lowest version bought with `all_versions`: it and every later version are held. */
  allVersionsFrom?: string;
}

export async function holdingOf(database: Database, wallet: string, listingId: string): Promise<Holding> {
  return holdingFrom(await readHolding(database, wallet.toLowerCase(), listingId));
}

/**
 * A payer's holding and the id of its authorization's payment row (asset and nonce), if it has
 * one, read together: a purchase is written after its payment row, so a holding that came from
 * this very authorization is always seen with its row (a replay).
 */
export async function holdingAndPayment(
  database: Database,
  payer: string,
  listingId: string,
  authorization: { asset: string; nonce: string },
): Promise<{ holding: Holding; paymentId?: string }> {
  const read = await readHolding(database, payer.toLowerCase(), listingId, authorization);
  return { holding: holdingFrom(read), paymentId: read.paymentId };
}

function holdingFrom(read: { versions: string[]; allVersions: string[] }): Holding {
  return { versions: read.versions, allVersionsFrom: read.allVersions.sort(compareVersions)[0] };
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
