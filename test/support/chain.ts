import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
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

/** A smart wallet (EIP-1271) that accepts signatures by its owner, deployed or counterfactual. */
export interface SmartWallet {
  address: Address;
  owner: Address;
  /** Where an undeployed wallet would come from (ERC-6492). */
  factory?: { address: Address; data: Hex };
}

export interface TestChain {
  url: string;
  /** JSON-RPC methods received, in order. */
  calls: string[];
  close(): Promise<void>;
}

/**
 * A stand-in Base JSON-RPC endpoint for the calls viem makes to verify smart-wallet signatures:
 * `eth_getCode`, and the deployless ERC-6492 validator's `eth_call`, which it answers the way the
 * validator contract would for the wallets given (run the factory if needed, then ask the wallet's
 * isValidSignature, here an owner-signature check). The devnet chain will replace it.
 */
export async function startTestChain(wallets: SmartWallet[]): Promise<TestChain> {
  const calls: string[] = [];
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

  const server: Server = createServer((request, response) => {
    let raw = '';
    request.on('data', (chunk) => {
      raw += chunk;
    });
    request.on('end', async () => {
      const { id, method, params } = JSON.parse(raw) as { id: number; method: string; params: unknown[] };
      calls.push(method);
      const reply = (body: object) => {
        response.setHeader('content-type', 'application/json');
        response.end(JSON.stringify({ jsonrpc: '2.0', id, ...body }));
      };
      try {
        if (method === 'eth_chainId') return reply({ result: '0x2105' });
        if (method === 'eth_getCode')
          return reply({ result: deployed(params[0] as string) ? '0x6080' : '0x' });
        if (method === 'eth_call') {
          return reply({ result: await validatorCall((params[0] as { data: Hex }).data) });
        }
        reply({ error: { code: -32601, message: `method ${method} not served by the test chain` } });
      } catch (error) {
        reply({ error: { code: -32000, message: (error as Error).message } });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
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
