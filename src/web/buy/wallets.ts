import type { Address, Eip1193Provider } from '../wallet.js';

/** A wallet the page can offer: one a browser extension announced, the injected fallback, or the devnet's. */
export interface WalletOption {
  id: string;
  /** Which wallet it is across page loads (EIP-6963's reverse-DNS name; the uuid changes per load). */
  rdns: string;
  name: string;
  /** A data: URL the wallet announced (EIP-6963); absent for the fallback. */
  icon?: string;
  provider: Eip1193Provider;
  /** The devnet's test wallet, kept in this tab: test money only. */
  test?: boolean;
}

interface Eip6963Announcement {
  info: { uuid: string; name: string; icon: string; rdns: string };
  provider: Eip1193Provider;
}

/**
 * The chain this server is paid on (Base; Base Sepolia on a testnet staging), as the page names it
 * on the element the script renders into (`data-chain-id`, `data-chain-name`).
 */
export interface PageChain {
  /** The chain id as wallets report it (`eth_chainId`): lower-case hex. */
  hex: string;
  name: string;
  /** What a wallet that does not know the chain is asked to add (`data-chain-rpc`, `data-chain-explorer`). */
  rpcUrl?: string;
  explorerUrl?: string;
}

export function pageChain(data: DOMStringMap): PageChain {
  const id = Number.parseInt(data.chainId ?? '', 10);
  if (!Number.isSafeInteger(id) || id <= 0) throw new Error('The page names no chain to pay on.');
  return {
    hex: `0x${id.toString(16)}`,
    name: data.chainName || `the chain with id ${id}`,
    rpcUrl: data.chainRpc,
    explorerUrl: data.chainExplorer,
  };
}

/** EIP-6963 icons are data: URLs; anything else would load from elsewhere, so it is not shown. */
const DATA_IMAGE = /^data:image\/(svg\+xml|png|jpeg|webp|gif)[;,]/;

/**
 * The wallets the browser offers, by EIP-6963: every extension announces itself with its name and
 * icon, so a person with several picks one. `window.ethereum` is offered only when nothing
 * announced, since it is one of the announced wallets (whichever injected last). Calls `onChange`
 * with the list now and whenever a wallet announces itself later; returns the unsubscribe.
 */
export function discoverWallets(onChange: (wallets: WalletOption[]) => void): () => void {
  const announced = new Map<string, WalletOption>();
  const report = () => {
    const wallets = [...announced.values()];
    const injected = (window as unknown as { ethereum?: Eip1193Provider }).ethereum;
    if (wallets.length === 0 && injected) {
      wallets.push({ id: 'injected', rdns: 'injected', name: 'Browser wallet', provider: injected });
    }
    onChange(wallets);
  };
  const listener = (event: Event) => {
    const detail = (event as CustomEvent<Eip6963Announcement>).detail;
    if (!detail?.info?.uuid || typeof detail.provider?.request !== 'function') return;
    announced.set(detail.info.uuid, {
      id: detail.info.uuid,
      rdns: String(detail.info.rdns || detail.info.uuid),
      name: String(detail.info.name || 'Browser wallet').slice(0, 60),
      icon: DATA_IMAGE.test(detail.info.icon ?? '') ? detail.info.icon : undefined,
      provider: detail.provider,
    });
    report();
  };
  window.addEventListener('eip6963:announceProvider', listener);
  window.dispatchEvent(new Event('eip6963:requestProvider'));
  report();
  return () => window.removeEventListener('eip6963:announceProvider', listener);
}

/** The account the wallet has selected, after asking the person to connect it. */
export async function connectAccount(wallet: WalletOption): Promise<Address> {
  const accounts = (await wallet.provider.request({ method: 'eth_requestAccounts' })) as string[];
  const account = accounts?.[0];
  if (!account) throw new Error('The wallet shared no account. Unlock it, choose an account and try again.');
  return account.toLowerCase() as Address;
}

/** The account the wallet shares with this page without asking, if any (`eth_accounts`). */
export async function sharedAccount(wallet: WalletOption): Promise<Address | undefined> {
  const accounts = (await wallet.provider.request({ method: 'eth_accounts' })) as string[];
  return accounts?.[0]?.toLowerCase() as Address | undefined;
}

/** The chain the wallet is on, as the hex chain id it reports (`0x2105` is Base, `0x14a34` Base Sepolia). */
export async function walletChain(wallet: WalletOption): Promise<string> {
  return String(await wallet.provider.request({ method: 'eth_chainId' })).toLowerCase();
}

export async function switchChain(wallet: WalletOption, chain: PageChain): Promise<void> {
  try {
    await wallet.provider.request({
      method: 'wallet_switchEthereumChain',
      params: [{ chainId: chain.hex }],
    });
  } catch (error) {
    if (!unknownChain(error) || !chain.rpcUrl) throw error;
    // EIP-3085: the wallet asks its owner to add the chain, and switches to it once added.
    await wallet.provider.request({
      method: 'wallet_addEthereumChain',
      params: [
        {
          chainId: chain.hex,
          chainName: chain.name,
          nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
          rpcUrls: [chain.rpcUrl],
          blockExplorerUrls: chain.explorerUrl ? [chain.explorerUrl] : undefined,
        },
      ],
    });
  }
}

/** EIP-3326's "unrecognized chain" (4902), also as MetaMask Mobile wraps it in an internal error. */
function unknownChain(error: unknown): boolean {
  const { code, data } = (error ?? {}) as { code?: number; data?: { originalError?: { code?: number } } };
  return code === 4902 || data?.originalError?.code === 4902;
}

/** Names for the chains a wallet is most often on, for the page to say where it is. */
const CHAIN_NAMES: Record<string, string> = {
  '0x1': 'Ethereum',
  '0x2105': 'Base',
  '0xa': 'Optimism',
  '0x89': 'Polygon',
  '0xa4b1': 'Arbitrum One',
  '0x14a34': 'Base Sepolia (a test network)',
  '0xaa36a7': 'Sepolia (a test network)',
};

export function chainName(chainHex: string): string {
  return CHAIN_NAMES[chainHex] ?? `the network with chain id ${Number.parseInt(chainHex, 16) || chainHex}`;
}
