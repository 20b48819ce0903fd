import type { Db } from '../db/connect.js';
import { newSecret, sha256Hex } from '../platform/tokens.js';
import { insertInvites, markInviteUsed } from './store.js';

export const INVITE_PREFIX = 'r402inv_';
export const MAX_INVITES_PER_CALL = 1000;

/** New single-use invite codes; only their hashes are stored, so they are shown this once. */
export async function createInvites(db: Db, count: number): Promise<string[]> {
  if (!Number.isInteger(count) || count < 1 || count > MAX_INVITES_PER_CALL) {
    throw new RangeError(`count must be an integer from 1 to ${MAX_INVITES_PER_CALL}`);
  }
  const codes = Array.from({ length: count }, () => newSecret(INVITE_PREFIX, 16));
  await insertInvites(db, codes.map(sha256Hex));
  return codes;
}

/** Uses up an invite for `usedBy`; false when the code is unknown or already used. */
export function consumeInvite(db: Db, code: string, usedBy: string, at: Date): Promise<boolean> {
  return markInviteUsed(db, sha256Hex(code), usedBy, at);
}
