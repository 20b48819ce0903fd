import { generatePrivateKey } from 'viem/accounts';
import { afterEach, describe, expect, it } from 'vitest';
import { startDevnetChain } from '../../src/devnet/chain.js';
import { newWallet } from '../identity/support.js';
import { openTestDatabase, type TestDatabase } from '../support/db.js';

/**
 * A closed devnet chain's EDR provider is reverted to its genesis and taken by the next chain of the
 * same genesis in the process (EDR never frees one). The next chain must start exactly as a new one,
 * and the closed chain must never reach it.
 */
describe('a devnet chain after another one closed', () => {
  const open: TestDatabase[] = [];
  afterEach(async () => {
    for (const db of open.splice(0)) await db.close();
  });
  const database = async () => {
    const db = await openTestDatabase('pglite');
    open.push(db);
    return db;
  };

  it('starts from the genesis, whatever the closed chain mined, and the closed chain answers nothing', async () => {
    const platformKey = generatePrivateKey();
    const holder = newWallet().address;
    const first = await startDevnetChain({ db: (await database()).db, platformKey });
    const emptyBlock = await first.publicClient.getBlockNumber({ cacheTime: 0 });
    await first.fund(holder, 5_000_000n);
    await first.fundGas(holder);
    expect(await first.balanceOf(holder)).toBe(5_000_000n);
    expect(await first.publicClient.getBlockNumber({ cacheTime: 0 })).toBe(emptyBlock + 2n);
    await first.close();
    await expect(first.publicClient.getBlockNumber({ cacheTime: 0 })).rejects.toThrow(/closed/);

    // A new database: no journal to replay, so exactly what a new chain holds.
    const second = await startDevnetChain({ db: (await database()).db, platformKey });
    expect(await second.publicClient.getBlockNumber({ cacheTime: 0 })).toBe(emptyBlock);
    expect(await second.balanceOf(holder)).toBe(0n);
    expect(await second.publicClient.getBalance({ address: holder })).toBe(0n);
    // It mines as a new chain does, and closing the first again changes nothing.
    await first.close();
    await second.fund(holder, 1_000_000n);
    expect(await second.balanceOf(holder)).toBe(1_000_000n);
    await second.close();
  });

  it('replays its own journal on a reused provider, as on a new one', async () => {
    const platformKey = generatePrivateKey();
    const holder = newWallet().address;
    const db = await database();
    const first = await startDevnetChain({ db: db.db, platformKey });
    await first.fund(holder, 7_000_000n);
    const block = await first.publicClient.getBlockNumber({ cacheTime: 0 });
    await first.close();
    const restarted = await startDevnetChain({ db: db.db, platformKey });
    expect(restarted.replayed).toBe(1);
    expect(await restarted.balanceOf(holder)).toBe(7_000_000n);
    expect(await restarted.publicClient.getBlockNumber({ cacheTime: 0 })).toBe(block);
    await restarted.close();
  });
});
