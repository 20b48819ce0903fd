import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { type Address, declinedInWallet } from '../wallet.js';
import { forgetWalletSession, walletSession } from './wallet-session.js';
import {
  BASE_CHAIN_HEX,
  chainName,
  connectAccount,
  discoverWallets,
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
  'This server runs the repo402 devnet: its USDC is test money with no value. Buy with the test wallet kept in this browser tab, never with a wallet that holds real money.';

/**
 * Connecting a wallet, for the checkout and the library alike: the wallets the browser announces
 * by name and icon (on the devnet, only the tab's test wallet), the account, the chain (Base), and
 * one signature proving the wallet is the person's. `children` is shown once it is.
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
  if (state.step === 'connecting') {
    return (
      <p class="checkout-status" role="status">
        Check {state.wallet.name}: it asks you to connect, then to sign a message proving the wallet is yours.
        Signing it costs nothing and moves no money.
      </p>
    );
  }
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
  return (
    <div>
      {devnet ? <p class="notice">{TEST_MONEY}</p> : null}
      {state.error ? (
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
        <ul class="wallet-list">
          {wallets.map((wallet) => (
            <li key={wallet.id}>
              <button type="button" onClick={() => connect(wallet)}>
                {wallet.icon ? <img src={wallet.icon} alt="" width={24} height={24} /> : null}
                {purpose} with {wallet.name}
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
