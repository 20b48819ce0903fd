import { type Address, type Hex, hashMessage, isErc6492Signature, isHex, type PublicClient } from 'viem';
import { AppError } from '../platform/errors.js';
import { recoversTo } from './ecrecover.js';

export interface SignedMessage {
  address: Address;
  /** Signed verbatim as an EIP-191 personal message. */
  message: string;
  signature: string;
}

/**
 * The one signature check. A plain wallet (EOA) is verified by ECDSA recovery, locally. A smart
 * wallet (EIP-1271, or ERC-6492 when not yet deployed) needs the chain: with a client its contract
 * is asked; without one only plain wallets verify. A chain we cannot reach is our fault, not the
 * caller's, so it throws `internal` instead of answering false.
 */
export async function verifyWalletSignature(
  chainClient: PublicClient | undefined,
  { address, message, signature }: SignedMessage,
): Promise<boolean> {
  if (!isHex(signature, { strict: true }) || signature.length < 4 || signature.length % 2 !== 0) return false;
  const hex = signature as Hex;
  const counterfactual = isErc6492Signature(hex);
  if (!counterfactual && recoversTo(hashMessage(message), hex, address)) return true;
  if (!chainClient) return false;

  let code: Hex | undefined;
  try {
    code = await chainClient.getCode({ address });
  } catch (error) {
    throw chainUnreachable(error);
  }
  // No contract and no deployment data: a plain wallet whose signature did not recover.
  if (!counterfactual && (!code || code === '0x')) return false;
  try {
    return await chainClient.verifyMessage({ address, message, signature: hex });
  } catch (error) {
    throw chainUnreachable(error);
  }
}

function chainUnreachable(cause: unknown): AppError {
  return new AppError('internal', {
    message: 'Could not reach the chain to verify a smart-wallet signature; retry shortly',
    cause,
  });
}
