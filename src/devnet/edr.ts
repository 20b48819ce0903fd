import { createRequire } from 'node:module';
import type { EIP1193RequestFn } from 'viem';

/**
 * Hardhat's EDR as an in-process EIP-1193 provider. Loaded lazily: mainnet mode never needs the
 * native binding. The options that matter (docs/PAYMENTS.md): `bailOnCallFailure`, so a reverted
 * eth_call is an error and a replayed authorization cannot pass verify; and
 * `allowBlocksWithSameTimestamp`, so the chain clock does not run ahead one second per block and
 * authorizations do not expire early.
 */

type Edr = typeof import('@nomicfoundation/edr');

let edr: Edr | undefined;
// EDR allows one context per process.
let context: InstanceType<Edr['EdrContext']> | undefined;
let registered: Promise<void> | undefined;

function loadEdr(): Edr {
  if (!edr) {
    try {
      edr = createRequire(import.meta.url)('@nomicfoundation/edr') as Edr;
    } catch (error) {
      throw new Error(
        'The devnet chain needs @nomicfoundation/edr and its platform binding (npm ci installs it; ' +
          `see docs/PAYMENTS.md), or set PAYMENTS_MODE=mainnet: ${(error as Error).message}`,
      );
    }
  }
  return edr;
}

async function edrContext(): Promise<InstanceType<Edr['EdrContext']>> {
  const lib = loadEdr();
  context ??= new lib.EdrContext();
  registered ??= context.registerProviderFactory(lib.L1_CHAIN_TYPE, lib.l1ProviderFactory());
  await registered;
  return context;
}

export interface EdrOptions {
  chainId: number;
  /** Accounts funded with ether at genesis (for gas). */
  funded: { address: `0x${string}`; balanceWei: bigint }[];
  /** Seconds since the epoch; fixed, so a replayed journal's timestamps always follow it. */
  genesisTime: number;
}

/** An RPC error as viem expects it from a custom transport: `code` and `data` kept, so reverts decode. */
export class RpcError extends Error {
  constructor(
    message: string,
    readonly code: number,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'RpcError';
  }
}

export async function startEdrProvider(options: EdrOptions): Promise<EIP1193RequestFn> {
  const lib = loadEdr();
  const ctx = await edrContext();
  const hardfork = lib.l1HardforkLatest();
  const genesis = lib.l1GenesisState(hardfork);
  const provider = await ctx.createProvider(
    lib.L1_CHAIN_TYPE,
    {
      allowBlocksWithSameTimestamp: true,
      allowUnlimitedContractSize: false,
      bailOnCallFailure: true,
      bailOnTransactionFailure: false,
      chainId: BigInt(options.chainId),
      coinbase: Buffer.from('c014ba5ec014ba5ec014ba5ec014ba5ec014ba5e', 'hex'),
      defaultTransactionGasLimit: 16_000_000n,
      genesisState: [
        ...genesis,
        ...options.funded.map((account) => ({
          address: Buffer.from(account.address.slice(2), 'hex'),
          balance: account.balanceWei,
        })),
      ],
      hardfork: lib.l1HardforkToString(hardfork),
      initialBaseFeePerGas: 1_000_000n,
      minGasPrice: 0n,
      mining: { autoMine: true, memPool: { order: lib.MineOrdering.Fifo } },
      network: { genesisBlockGasLimit: 60_000_000n, genesisBlockTime: BigInt(options.genesisTime) },
      networkId: BigInt(options.chainId),
      observability: {},
      ownedAccounts: [],
      precompileOverrides: [],
    },
    { enable: false, decodeConsoleLogInputsCallback: () => [], printLineCallback: () => {} },
    { subscriptionCallback: () => {} },
    new lib.ContractDecoder(),
  );
  let id = 0;
  return (async ({ method, params }: { method: string; params?: unknown }) => {
    id += 1;
    const response = await provider.handleRequest(
      JSON.stringify({ jsonrpc: '2.0', id, method, params: params ?? [] }),
    );
    const body = (typeof response.data === 'string' ? JSON.parse(response.data) : response.data) as {
      result?: unknown;
      error?: { code: number; message: string; data?: unknown };
    };
    if (body.error) throw new RpcError(body.error.message, body.error.code, body.error.data);
    return body.result;
  }) as EIP1193RequestFn;
}
