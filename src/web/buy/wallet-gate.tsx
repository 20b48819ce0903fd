import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { type Address, declinedInWallet } from '../wallet.js';
import { forgetWalletSession, storedSession, walletSession } from './wallet-session.js';
import {
  BASE_CHAIN_HEX,
  chainName,
  connectAccount,
  discoverWallets,
  sharedAccount,
  switchToBase,
  type WalletOption,
  walletChain,
} from './wallets.js';
import { buyerErrorText } from './words.js';

/** A wallet the person connected, on Base, with the session that proves it is theirs. */
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
 * by name and icon (on the devnet, only the tab's test wallet), the account, the chain (Base), and
 * one signature proving the wallet is the person's. `children` is shown once it is. A wallet this
 * tab proved within its session reconnects by itself, without a prompt.
 */
export function WalletGate({
  devnet,
  purpose,
  children,
}: {
  devnet: boolean;
  /** The button's words: what connecting is for. */
  purpose: string;
  children: (connected: Connected, disconnect: () => void) => ComponentChildren;
}) {
  const [wallets, setWallets] = useState<WalletOption[]>([]);
  const [state, setState] = useState<Step>({ step: 'choose' });
  useEffect(() => {
    if (!devnet) return discoverWallets(setWallets);
    void import('./test-wallet.js').then(({ testWallet }) => setWallets([testWallet()]));
    return undefined;
  }, [devnet]);

  // After a reload, on the way back from the library, or mid-payment: the wallet the tab's session
  // was signed with, if it still shares that account without asking and is on Base.
  const resumed = useRef(false);
  useEffect(() => {
    const kept = storedSession();
    const wallet = kept && wallets.find((option) => option.rdns === kept.wallet);
    if (resumed.current || !kept || !wallet) return;
    resumed.current = true;
    void (async () => {
      if ((await sharedAccount(wallet)) !== kept.address) return;
      if ((await walletChain(wallet)) !== BASE_CHAIN_HEX) return;
      const connected = { wallet, address: kept.address, session: kept.token };
      setState((now) => (now.step === 'choose' && !now.error ? { step: 'connected', connected } : now));
    })().catch(() => {
      // The wallet would not say: the person connects it by hand.
    });
  }, [wallets]);

  async function connect(wallet: WalletOption) {
    setState({ step: 'connecting', wallet });
    try {
      const address = await connectAccount(wallet);
      const chain = await walletChain(wallet);
      if (chain !== BASE_CHAIN_HEX) {
        setState({ step: 'wrong-chain', wallet, chain });
        return;
      }
      const session = await walletSession(wallet, address);
      setState({ step: 'connected', connected: { wallet, address, session } });
    } catch (error) {
      setState({ step: 'choose', error: buyerErrorText(error) });
    }
  }

  async function switchChain(wallet: WalletOption, chain: string) {
    try {
      await switchToBase(wallet);
      await connect(wallet);
    } catch (error) {
      setState({
        step: 'wrong-chain',
        wallet,
        chain,
        error: declinedInWallet(error)
          ? 'You declined the switch in your wallet. Switch it to Base yourself, then connect again.'
          : 'Your wallet could not switch by itself. Choose Base in your wallet, then connect again.',
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
          {state.wallet.name} is on {chainName(state.chain)}. Payments here are made in USDC on Base: switch
          your wallet to Base to continue.
        </p>
        {state.error ? <p role="alert">{state.error}</p> : null}
        <p>
          <button type="button" class="primary" onClick={() => switchChain(state.wallet, state.chain)}>
            Switch to Base
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
