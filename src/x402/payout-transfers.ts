import {
  type Address,
  encodeFunctionData,
  erc20Abi,
  type Hex,
  keccak256,
  type PublicClient,
  parseTransaction,
  TransactionReceiptNotFoundError,
  WaitForTransactionReceiptTimeoutError,
  type WalletClient,
} from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';

/** A payout transfer signed but not yet sent: its hash is known before anything leaves. */
export interface SignedPayout {
  hash: Hex;
  raw: Hex;
}

/**
 * What the chain says about a signed payout: `mined` or `reverted` are final; `dropped` means its
 * nonce was used by another transaction, so it can never be mined; `unknown` means not yet.
 */
export type PayoutOutcome = 'mined' | 'reverted' | 'dropped' | 'unknown';

/**
 * Payouts from the platform wallet in three steps, so a payout is never paid twice nor lost:
 * sign (the hash can be recorded before sending), send (idempotent: the same signed bytes can be
 * sent again), and read the outcome from the chain.
 */
export interface PayoutTransfers {
  /** Signs a USDC transfer; throws when the chain would refuse it (nothing was signed or sent). */
  sign(to: Address, amountMicro: bigint): Promise<SignedPayout>;
  /** Sends signed bytes; an error here is ambiguous (they may have reached the chain). */
  send(raw: Hex): Promise<void>;
  /** Waits up to `waitMs` for a receipt, then asks whether the nonce was taken by another transaction. */
  outcome(payout: SignedPayout, waitMs: number): Promise<PayoutOutcome>;
}

export function chainPayouts(options: {
  publicClient: PublicClient;
  walletClient: WalletClient;
  account: PrivateKeyAccount;
  asset: Address;
}): PayoutTransfers {
  const { publicClient, walletClient, account, asset } = options;
  return {
    async sign(to, amountMicro) {
      // The account's nonce manager is shared with settlements, so the two never take one nonce.
      const request = await walletClient.prepareTransactionRequest({
        account,
        chain: walletClient.chain,
        to: asset,
        data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to, amountMicro] }),
      });
      const raw = await walletClient.signTransaction(request as never);
      return { hash: keccak256(raw), raw };
    },
    async send(raw) {
      await walletClient.sendRawTransaction({ serializedTransaction: raw });
    },
    async outcome(payout, waitMs) {
      try {
        const receipt =
          waitMs > 0
            ? await publicClient.waitForTransactionReceipt({
                hash: payout.hash,
                timeout: waitMs,
                pollingInterval: Math.min(1000, waitMs),
              })
            : await publicClient.getTransactionReceipt({ hash: payout.hash });
        return receipt.status === 'success' ? 'mined' : 'reverted';
      } catch (error) {
        if (
          !(error instanceof TransactionReceiptNotFoundError) &&
          !(error instanceof WaitForTransactionReceiptTimeoutError)
        )
          throw error;
      }
      const { nonce } = parseTransaction(payout.raw);
      const mined = await publicClient.getTransactionCount({ address: account.address, blockTag: 'latest' });
      // Re-read after the count: the payout may have been mined between the two reads.
      if (nonce !== undefined && mined > nonce) {
        const late = await publicClient
          .getTransactionReceipt({ hash: payout.hash })
          .catch((error) =>
            error instanceof TransactionReceiptNotFoundError ? undefined : Promise.reject(error),
          );
        if (late) return late.status === 'success' ? 'mined' : 'reverted';
        return 'dropped';
      }
      return 'unknown';
    },
  };
}
