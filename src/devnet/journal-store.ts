import { asc } from 'drizzle-orm';
import type { Db } from '../db/connect.js';
import { devnetTransactions } from '../db/schema/index.js';

export interface JournalEntry {
  blockTimestamp: number;
  raw: `0x${string}`;
  /** The token's EIP-712 domain name the transaction was sent under. */
  tokenName: string;
}

export async function appendJournal(db: Db, entry: JournalEntry, at: Date): Promise<void> {
  await db.insert(devnetTransactions).values({
    blockTimestamp: entry.blockTimestamp,
    raw: entry.raw,
    tokenName: entry.tokenName,
    createdAt: at,
  });
}

export async function readJournal(db: Db): Promise<JournalEntry[]> {
  const rows = await db
    .select({
      blockTimestamp: devnetTransactions.blockTimestamp,
      raw: devnetTransactions.raw,
      tokenName: devnetTransactions.tokenName,
    })
    .from(devnetTransactions)
    .orderBy(asc(devnetTransactions.seq));
  return rows.map((row) => ({ ...row, raw: row.raw as `0x${string}` }));
}
