import path from 'node:path';
import { getAddress } from 'viem';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { compileContracts } from '../../scripts/solidity.js';
import { encodeWalletSignature } from '../../src/identity/wallet-signature.js';
import { getChallenge, newWallet } from '../identity/support.js';
import { createPaymentsApp, type PaymentsTestApp } from './support.js';

/** EIP-1271 smart wallets sign in through identity's challenge path, verified against the devnet chain. */
describe('smart-wallet signatures on the devnet chain', () => {
  let t: PaymentsTestApp;
  beforeEach(async () => {
    t = await createPaymentsApp();
  });
  afterEach(async () => {
    await t.close();
  });

  it('accepts a wallet_ownership challenge signed by the owner of a deployed EIP-1271 wallet, refuses others', async () => {
    const { SmartWallet } = await compileContracts([
      path.resolve(import.meta.dirname, 'contracts/SmartWallet.sol'),
    ]);
    const owner = newWallet();
    const devnet = t.rail.devnet!;
    const hash = await devnet.walletClient.deployContract({
      account: devnet.platform,
      chain: devnet.publicClient.chain,
      abi: SmartWallet!.abi,
      bytecode: SmartWallet!.bytecode,
      args: [owner.address],
    });
    const receipt = await devnet.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 10 });
    const wallet = receipt.contractAddress!;
    expect(t.ctx.chainClient).toBe(devnet.publicClient);

    const header = async (signer: ReturnType<typeof newWallet>) => {
      const challenge = await getChallenge(t, wallet, 'wallet_ownership');
      const signature = await signer.signMessage({ message: challenge.message });
      return encodeWalletSignature({ address: wallet, nonce: challenge.nonce, signature });
    };
    const accepted = await t.app.inject({
      url: '/api/entitlements',
      headers: { 'x-wallet-signature': await header(owner) },
    });
    expect(accepted.statusCode, accepted.body).toBe(200);
    expect(accepted.json().wallet).toBe(getAddress(wallet));
    const refused = await t.app.inject({
      url: '/api/entitlements',
      headers: { 'x-wallet-signature': await header(newWallet()) },
    });
    expect(refused.statusCode).toBe(401);
    expect(refused.json().code).toBe('invalid_signature');
  });
});
