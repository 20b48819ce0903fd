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

/** A chain on EDR: its EIP-1193 request function, and `release` once nothing will ask it again. */
export interface EdrProvider {
  request: EIP1193RequestFn;
  release(): Promise<void>;
}

type Provider = Awaited<ReturnType<InstanceType<Edr['EdrContext']>['createProvider']>>;

/**
 * Released providers, by the genesis they were made with, each with a snapshot of its genesis.
 * EDR never frees a provider (about 3 MB of native memory each, kept after collection), so a
 * process that opens chain after chain (the tests' apps, hundreds per worker) reverts a released
 * one to its genesis and hands it to the next chain of the same genesis instead.
 */
const released = new Map<string, { provider: Provider; genesis: string }[]>();
const MAX_RELEASED_PER_GENESIS = 4;

export async function startEdrProvider(options: EdrOptions): Promise<EdrProvider> {
  const key = JSON.stringify(options, (_, value) => (typeof value === 'bigint' ? value.toString() : value));
  const reused = released.get(key)?.pop();
  const provider = reused?.provider ?? (await createProvider(options));
  const call = async (method: string, params?: unknown) => {
    const response = await provider.handleRequest(
      JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: params ?? [] }),
    );
    const body = (typeof response.data === 'string' ? JSON.parse(response.data) : response.data) as {
      result?: unknown;
      error?: { code: number; message: string; data?: unknown };
    };
    if (body.error) throw new RpcError(body.error.message, body.error.code, body.error.data);
    return body.result;
  };
  const genesis = reused?.genesis ?? ((await call('evm_snapshot')) as string);
  let open = true;
  return {
    request: (async ({ method, params }: { method: string; params?: unknown }) => {
      // A caller that outlives its chain must never reach the next chain on this provider.
      if (!open) throw new Error('this devnet chain is closed');
      return call(method, params);
    }) as EIP1193RequestFn,
    async release() {
      if (!open) return;
      open = false;
      const pool = released.get(key) ?? [];
      if (pool.length >= MAX_RELEASED_PER_GENESIS) return;
      // A revert consumes its snapshot: the next chain gets a new one of the same genesis.
      if ((await call('evm_revert', [genesis])) !== true) return;
      pool.push({ provider, genesis: (await call('evm_snapshot')) as string });
      released.set(key, pool);
    },
  };
}

async function createProvider(options: EdrOptions): Promise<Provider> {
  const lib = loadEdr();
  const ctx = await edrContext();
  const hardfork = lib.l1HardforkLatest();
  const genesis = lib.l1GenesisState(hardfork);
  return ctx.createProvider(
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
}
