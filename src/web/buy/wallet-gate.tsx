import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { type Address, declinedInWallet } from '../wallet.js';
import { forgetWalletSession, storedSession, walletSession } from './wallet-session.js';
import {
  chainName,
  connectAccount,
  discoverWallets,
  type PageChain,
  sharedAccount,
  switchChain,
  type WalletOption,
  walletChain,
} from './wallets.js';
import { buyerErrorText } from './words.js';

/** A wallet the person connected, on the chain paid on, with the session that proves it is theirs. */
export interface Connected {
  wallet: WalletOption;
  address: Address;
  session: string;
}

type Step =
  | { step: 'choose'; error?: string }
  | { step: 'connecting'; wallet: WalletOption }
  | { step: 'wrong-chain'; wallet: WalletOption; chain: string; error?: string }
  | { step: 'connected'; connected: Connected };

const TEST_MONEY =
  'This server runs the repo402 devnet: its USDC is test money with no value. Buy with the test wallet, never with a wallet that holds real money. The test wallet lives in this browser tab only: what it buys is in this tab’s library, and closing the tab forgets it.';

/**
 * Connecting a wallet, for the checkout and the library alike: the wallets the browser announces
 * by name and icon (on the devnet, only the tab's test wallet), the account, the chain (the page's), and
 * one signature proving the wallet is the person's. `children` is shown once it is. A wallet this
 * tab proved within its session reconnects by itself, without a prompt.
 */
export function WalletGate({
  devnet,
  chain,
  purpose,
  children,
}: {
  devnet: boolean;
  /** The chain this server is paid on: the wallet must be on it. */
  chain: PageChain;
  /** The button's words: what connecting is for. */
  purpose: string;
  children: (connected: Connected, disconnect: () => void) => ComponentChildren;
}) {
  const [wallets, setWallets] = useState<WalletOption[]>([]);
  const [state, setState] = useState<Step>({ step: 'choose' });
  useEffect(() => {
    if (!devnet) return discoverWallets(setWallets);
    void import('./test-wallet.js').then(({ testWallet }) => setWallets([testWallet(chain)]));
    return undefined;
  }, [devnet, chain]);

  // After a reload, on the way back from the library, or mid-payment: the wallet the tab's session
  // was signed with, if it still shares that account without asking and is on the chain paid on.
  const resumed = useRef(false);
  useEffect(() => {
    const kept = storedSession();
    const wallet = kept && wallets.find((option) => option.rdns === kept.wallet);
    if (resumed.current || !kept || !wallet) return;
    resumed.current = true;
    void (async () => {
      if ((await sharedAccount(wallet)) !== kept.address) return;
      if ((await walletChain(wallet)) !== chain.hex) return;
      const connected = { wallet, address: kept.address, session: kept.token };
      setState((now) => (now.step === 'choose' && !now.error ? { step: 'connected', connected } : now));
    })().catch(() => {
      // The wallet would not say: the person connects it by hand.
    });
  }, [wallets, chain]);

  async function connect(wallet: WalletOption) {
    setState({ step: 'connecting', wallet });
    try {
      const address = await connectAccount(wallet);
      const on = await walletChain(wallet);
      if (on !== chain.hex) {
        setState({ step: 'wrong-chain', wallet, chain: on });
        return;
      }
      const session = await walletSession(wallet, address);
      setState({ step: 'connected', connected: { wallet, address, session } });
    } catch (error) {
      setState({ step: 'choose', error: buyerErrorText(error) });
    }
  }

  async function switchWallet(wallet: WalletOption, on: string) {
    try {
      await switchChain(wallet, chain);
      await connect(wallet);
    } catch (error) {
      setState({
        step: 'wrong-chain',
        wallet,
        chain: on,
        error: declinedInWallet(error)
          ? `You declined the switch in your wallet. Switch it to ${chain.name} yourself, then connect again.`
          : `Your wallet could not switch by itself. Choose ${chain.name} in your wallet, then connect again.`,
      });
    }
  }

  function disconnect() {
    forgetWalletSession();
    setState({ step: 'choose' });
  }

  if (state.step === 'connected') return <>{children(state.connected, disconnect)}</>;
  if (state.step === 'wrong-chain') {
    return (
      <div>
        <p class="notice" role="alert">
          {state.wallet.name} is on {chainName(state.chain)}. Payments here are made in USDC on {chain.name}:
          switch your wallet to {chain.name} to continue.
        </p>
        {state.error ? <p role="alert">{state.error}</p> : null}
        <p>
          <button type="button" class="primary" onClick={() => switchWallet(state.wallet, state.chain)}>
            Switch to {chain.name}
          </button>{' '}
          <button type="button" onClick={() => setState({ step: 'choose' })}>
            Choose another wallet
          </button>
        </p>
      </div>
    );
  }
  const connecting = state.step === 'connecting' ? state.wallet : undefined;
  return (
    <div>
      {devnet ? <p class="test-money-note">{TEST_MONEY}</p> : null}
      {state.step === 'choose' && state.error ? (
        <p class="notice" role="alert">
          {state.error}
        </p>
      ) : null}
      {wallets.length === 0 ? (
        <p>
          No browser wallet was found. Install one (MetaMask, Coinbase Wallet and Rabby are browser
          extensions) and reload this page; agents and programs buy over HTTP, as below.
        </p>
      ) : (
        // The list stays in place while a wallet connects: nothing moves under a second click.
        <ul class="wallet-list">
          {wallets.map((wallet) => (
            <li key={wallet.id}>
              <button type="button" disabled={connecting !== undefined} onClick={() => connect(wallet)}>
                {wallet.icon ? <img src={wallet.icon} alt="" width={24} height={24} /> : null}
                {purpose} with {wallet.name}
              </button>
            </li>
          ))}
        </ul>
      )}
      {connecting ? (
        <p class="checkout-status" role="status">
          Check {connecting.name}: it asks you to connect, then to sign a message proving the wallet is yours.
          Signing it costs nothing and moves no money.
        </p>
      ) : null}
    </div>
  );
}
