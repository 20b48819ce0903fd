import { and, asc, count, eq, gt, sql } from 'drizzle-orm';
import type { Address, Hex } from 'viem';
import type { AppContext } from '../context.js';
import { devnetFaucetGrants } from '../db/schema/index.js';
import { AppError } from '../platform/errors.js';

/**
 * The devnet faucet: test USDC for a person trying the service in a browser, who has no CLI to run
 * `repo402 devnet fund`. Test money, but still capped so one client cannot mint without end: a
 * grant per call, a few per address and a bounded number for the whole server per day. The counts
 * live in the database under a lock, so the caps hold across processes.
 */
export const FAUCET_GRANT_MICRO = 10_000_000n;
export const FAUCET_GRANTS_PER_ADDRESS = 3;
export const FAUCET_GRANTS_PER_DAY = 1_000;
const DAY_MS = 24 * 60 * 60_000;

export interface FaucetGrant {
  address: Address;
  amountMicro: bigint;
  transaction: Hex;
}

export async function grantFromFaucet(ctx: AppContext, address: Address): Promise<FaucetGrant> {
  const devnet = (await ctx.rail()).devnet;
  if (!devnet) throw new AppError('not_found');
  const now = ctx.clock.now();
  const since = new Date(now.getTime() - DAY_MS);
  const holder = address.toLowerCase();
  const db = ctx.database.db;
  // The grant reserves its row under the caps first and is sent after: the chain's own journal
  // writes to the database, which a transaction held open across the send would wait on.
  const [reserved] = await db.transaction(async (tx) => {
    // Every grant takes the same lock: counting and inserting cannot interleave between processes.
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext('repo402/devnet-faucet'))`);
    const [all] = await tx
      .select({ grants: count() })
      .from(devnetFaucetGrants)
      .where(gt(devnetFaucetGrants.grantedAt, since));
    const mine = await tx
      .select({ grantedAt: devnetFaucetGrants.grantedAt })
      .from(devnetFaucetGrants)
      .where(and(eq(devnetFaucetGrants.address, holder), gt(devnetFaucetGrants.grantedAt, since)))
      .orderBy(asc(devnetFaucetGrants.grantedAt));
    if (mine.length >= FAUCET_GRANTS_PER_ADDRESS) {
      throw capped(
        `This address had test USDC ${FAUCET_GRANTS_PER_ADDRESS} times in the last 24 hours`,
        mine[0]!.grantedAt.getTime() + DAY_MS - now.getTime(),
      );
    }
    if ((all?.grants ?? 0) >= FAUCET_GRANTS_PER_DAY) {
      throw capped('The faucet handed out its test USDC for today', DAY_MS / 24);
    }
    return tx
      .insert(devnetFaucetGrants)
      .values({ address: holder, amountMicro: FAUCET_GRANT_MICRO, grantedAt: now })
      .returning({ id: devnetFaucetGrants.id });
  });
  const id = reserved!.id;
  let transaction: Hex;
  try {
    transaction = await devnet.fund(address, FAUCET_GRANT_MICRO);
  } catch (error) {
    // Nothing was sent: the place under the caps is given back.
    await db.delete(devnetFaucetGrants).where(eq(devnetFaucetGrants.id, id));
    throw error;
  }
  await db.update(devnetFaucetGrants).set({ transaction }).where(eq(devnetFaucetGrants.id, id));
  return { address, amountMicro: FAUCET_GRANT_MICRO, transaction };
}

function capped(message: string, waitMs: number): AppError {
  return new AppError('rate_limited', {
    message: `${message}; try again later`,
    retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)),
  });
}
