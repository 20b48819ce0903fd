import { randomBytes } from 'node:crypto';
import type { Hex } from 'viem';
import { generatePrivateKey } from 'viem/accounts';
import { afterEach, describe, expect, it } from 'vitest';
import { type DevnetChain, startDevnetChain } from '../../src/devnet/chain.js';
import { DevUSDC } from '../../src/devnet/generated/contract-artifacts.js';
import { DEVNET_TOKEN_DOMAIN } from '../../src/devnet/token-domain.js';
import { BASE } from '../../src/platform/networks.js';
import { newWallet } from '../identity/support.js';
import { USDC_DOMAIN } from '../support/chain.js';
import { openTestDatabase, type TestDatabase } from '../support/db.js';

/**
 * The devnet impersonates Base: chain id 8453, the token at the real USDC address. Only its token's
 * EIP-712 name differs, and that alone must make every authorization signed for it worthless on
 * Base, where the token's domain is real USDC's.
 */
describe("the devnet token's EIP-712 domain", () => {
  const open: TestDatabase[] = [];
  afterEach(async () => {
    for (const db of open.splice(0)) await db.close();
  });

  /** A chain on a fresh database, or restarted on `db`: the platform key is the same across restarts. */
  async function chain(
    tokenName?: string,
    db?: TestDatabase,
    platformKey: Hex = generatePrivateKey(),
  ): Promise<{ chain: DevnetChain; db: TestDatabase; platformKey: Hex }> {
    const database = db ?? (await openTestDatabase('pglite'));
    if (!db) open.push(database);
    const started = await startDevnetChain({ db: database.db, platformKey, tokenName });
    return { chain: started, db: database, platformKey };
  }

  /** A buyer's EIP-3009 authorization to pay `to`, signed under the token domain `name`. */
  async function authorization(name: string, to: Hex) {
    const buyer = newWallet();
    const message = {
      from: buyer.address,
      to,
      value: 1_000_000n,
      validAfter: 0n,
      validBefore: BigInt(Math.floor(Date.now() / 1000) + 3600),
      nonce: `0x${randomBytes(32).toString('hex')}` as Hex,
    };
    const signature = await buyer.signTypedData({
      domain: { name, version: '2', chainId: BASE.chainId, verifyingContract: BASE.usdc },
      types: {
        TransferWithAuthorization: [
          { name: 'from', type: 'address' },
          { name: 'to', type: 'address' },
          { name: 'value', type: 'uint256' },
          { name: 'validAfter', type: 'uint256' },
          { name: 'validBefore', type: 'uint256' },
          { name: 'nonce', type: 'bytes32' },
        ],
      },
      primaryType: 'TransferWithAuthorization',
      message,
    });
    return { buyer, message, signature };
  }

  /** Executes the authorization on `on`, as a facilitator's settle does; resolves to whether it mined. */
  async function execute(on: DevnetChain, auth: Awaited<ReturnType<typeof authorization>>) {
    const { message, signature } = auth;
    const hash = await on.walletClient.writeContract({
      account: on.platform,
      chain: on.walletClient.chain,
      address: BASE.usdc,
      abi: DevUSDC.abi,
      functionName: 'transferWithAuthorization',
      args: [
        message.from,
        message.to,
        message.value,
        message.validAfter,
        message.validBefore,
        message.nonce,
        signature,
      ],
      gas: 200_000n,
    });
    return (await on.publicClient.waitForTransactionReceipt({ hash })).status;
  }

  const nameOf = (on: DevnetChain) =>
    on.publicClient.readContract({ address: BASE.usdc, abi: DevUSDC.abi, functionName: 'name' });

  it('is not real USDC’s, so an authorization signed for the devnet fails against real USDC’s domain', async () => {
    const devnet = (await chain()).chain;
    const base = (await chain(USDC_DOMAIN.name)).chain;
    expect(DEVNET_TOKEN_DOMAIN.name).not.toBe(USDC_DOMAIN.name);
    expect(await nameOf(devnet)).toBe(DEVNET_TOKEN_DOMAIN.name);
    expect(await nameOf(base)).toBe('USD Coin');

    // Signed as a devnet 402 asks: refused by a token with real USDC's domain at the same address
    // on the same chain id, and executed by the devnet.
    const signedForDevnet = await authorization(DEVNET_TOKEN_DOMAIN.name, base.platform.address);
    await base.fund(signedForDevnet.buyer.address, 5_000_000n);
    await devnet.fund(signedForDevnet.buyer.address, 5_000_000n);
    await expect(
      base.publicClient.simulateContract({
        account: base.platform,
        address: BASE.usdc,
        abi: DevUSDC.abi,
        functionName: 'transferWithAuthorization',
        args: [
          signedForDevnet.message.from,
          signedForDevnet.message.to,
          signedForDevnet.message.value,
          signedForDevnet.message.validAfter,
          signedForDevnet.message.validBefore,
          signedForDevnet.message.nonce,
          signedForDevnet.signature,
        ],
      }),
    ).rejects.toThrow(/FiatTokenV2: invalid signature/);
    expect(await execute(base, signedForDevnet)).toBe('reverted');
    expect(await base.balanceOf(signedForDevnet.buyer.address)).toBe(5_000_000n);
    expect(await execute(devnet, signedForDevnet)).toBe('success');
    expect(await devnet.balanceOf(signedForDevnet.buyer.address)).toBe(4_000_000n);

    // And the other way: a signature made for real USDC moves nothing on the devnet.
    const signedForBase = await authorization(USDC_DOMAIN.name, devnet.platform.address);
    await devnet.fund(signedForBase.buyer.address, 5_000_000n);
    expect(await execute(devnet, signedForBase)).toBe('reverted');
    expect(await devnet.balanceOf(signedForBase.buyer.address)).toBe(5_000_000n);
  }, 60_000);

  it('replays a journal written under real USDC’s name as it mined, then takes its own name', async () => {
    // A devnet journal from before the token had its own name: its authorizations were signed as USDC's.
    const { chain: before, db, platformKey } = await chain(USDC_DOMAIN.name);
    const old = await authorization(USDC_DOMAIN.name, before.platform.address);
    await before.fund(old.buyer.address, 3_000_000n);
    expect(await execute(before, old)).toBe('success');

    const after = (await chain(undefined, db, platformKey)).chain;
    expect(after.replayed).toBe(2);
    expect(await after.balanceOf(old.buyer.address)).toBe(2_000_000n);
    expect(await nameOf(after)).toBe(DEVNET_TOKEN_DOMAIN.name);
    const fresh = await authorization(DEVNET_TOKEN_DOMAIN.name, after.platform.address);
    await after.fund(fresh.buyer.address, 1_000_000n);
    expect(await execute(after, fresh)).toBe('success');

    // And once more: each entry under the name it was sent under.
    const again = (await chain(undefined, db, platformKey)).chain;
    expect(again.replayed).toBe(4);
    expect(await again.balanceOf(old.buyer.address)).toBe(2_000_000n);
    expect(await again.balanceOf(fresh.buyer.address)).toBe(0n);
  }, 60_000);
});
