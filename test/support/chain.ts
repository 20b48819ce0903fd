import {
  type Address,
  decodeAbiParameters,
  erc6492SignatureValidatorByteCode,
  type Hex,
  isAddressEqual,
  isErc6492Signature,
  parseErc6492Signature,
  recoverAddress,
} from 'viem';
import { generatePrivateKey } from 'viem/accounts';
import { type DevnetChain, startDevnetChain } from '../../src/devnet/chain.js';
import { BASE, BASE_SEPOLIA, type PaymentNetwork } from '../../src/platform/networks.js';
import { openTestDatabase } from './db.js';
import { type JsonRpcServer, serveJsonRpc } from './json-rpc.js';

/**
 * Real USDC's EIP-712 domain on Base, for chains that stand in for Base (mainnet-mode tests); the
 * devnet's own differs (src/devnet/token-domain.ts).
 */
export const USDC_DOMAIN = { name: 'USD Coin', version: '2' } as const;
/** Circle's test USDC on Base Sepolia names its domain "USDC" (x402's default asset table agrees). */
export const SEPOLIA_USDC_DOMAIN = { name: 'USDC', version: '2' } as const;

/** A smart wallet (EIP-1271) that accepts signatures by its owner, deployed or counterfactual. */

export interface SmartWallet {
  address: Address;
  owner: Address;
  /** Where an undeployed wallet would come from (ERC-6492). */
  factory?: { address: Address; data: Hex };
}

export type TestChain = JsonRpcServer;

/**
 * A stand-in Base JSON-RPC endpoint for the calls viem makes to verify smart-wallet signatures:
 * `eth_getCode`, and the deployless ERC-6492 validator's `eth_call`, which it answers the way the
 * validator contract would for the wallets given (run the factory if needed, then ask the wallet's
 * isValidSignature, here an owner-signature check). The devnet chain will replace it.
 */
export async function startTestChain(wallets: SmartWallet[]): Promise<TestChain> {
  const deployed = (address: string) =>
    wallets.find((wallet) => !wallet.factory && isAddressEqual(wallet.address, address as Address));

  async function validatorCall(data: Hex): Promise<Hex> {
    if (!data.startsWith(erc6492SignatureValidatorByteCode)) throw new Error('unexpected eth_call');
    const args = `0x${data.slice(erc6492SignatureValidatorByteCode.length)}` as Hex;
    const [signer, hash, signature] = decodeAbiParameters(
      [{ type: 'address' }, { type: 'bytes32' }, { type: 'bytes' }],
      args,
    );
    const wallet = wallets.find((candidate) => isAddressEqual(candidate.address, signer));
    let inner = signature;
    if (isErc6492Signature(signature)) {
      const unwrapped = parseErc6492Signature(signature);
      const deploys =
        wallet?.factory &&
        isAddressEqual(unwrapped.address!, wallet.factory.address) &&
        unwrapped.data === wallet.factory.data;
      if (!deploys) return bool(false);
      inner = unwrapped.signature;
    } else if (!wallet || wallet.factory) {
      // No code at the signer: the validator falls back to ECDSA recovery.
      return bool(await recovers(hash, inner, signer));
    }
    return bool(await recovers(hash, inner, wallet!.owner));
  }

  return serveJsonRpc(async (method, params) => {
    if (method === 'eth_chainId') return '0x2105';
    if (method === 'eth_getCode') return deployed(params[0] as string) ? '0x6080' : '0x';
    if (method === 'eth_call') return validatorCall((params[0] as { data: Hex }).data);
    throw Object.assign(new Error(`method ${method} not served by the test chain`), { code: -32601 });
  });
}

async function recovers(hash: Hex, signature: Hex, expected: Address): Promise<boolean> {
  try {
    return isAddressEqual(await recoverAddress({ hash, signature }), expected);
  } catch {
    return false;
  }
}

function bool(value: boolean): Hex {
  return `0x${value ? '1'.padStart(64, '0') : '0'.repeat(64)}`;
}

/**
 * Base as a mainnet-mode deployment reaches it: a chain of its own (EDR, the token at the Base
 * USDC address with real USDC's domain) behind a JSON-RPC endpoint for `BASE_RPC_URL`; or, given
 * `BASE_SEPOLIA`, Base Sepolia as a testnet deployment reaches it (chain id 84532, the token at
 * Circle's test USDC address under its domain "USDC"). A facilitator in front of `chain` is the
 * caller's to choose.
 */
export interface BaseStandIn {
  chain: DevnetChain;
  rpc: JsonRpcServer;
  close(): Promise<void>;
}

export async function startBaseStandIn(network: PaymentNetwork = BASE): Promise<BaseStandIn> {
  const database = await openTestDatabase('pglite');
  const chain = await startDevnetChain({
    db: database.db,
    platformKey: generatePrivateKey(),
    tokenName: (network === BASE_SEPOLIA ? SEPOLIA_USDC_DOMAIN : USDC_DOMAIN).name,
    network,
  });
  const rpc = await serveJsonRpc((method, params) => chain.request({ method, params } as never));
  return {
    chain,
    rpc,
    async close() {
      await rpc.close();
      await chain.close();
      await database.close();
    },
  };
}
