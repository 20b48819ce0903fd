import { useState } from 'preact/hooks';
import { TestMoney } from './faucet.js';
import { ListingPurchase, type ListingRef } from './listing-purchase.js';
import { WalletGate } from './wallet-gate.js';
import { shortAddress } from './words.js';

/** The Buy button the script adds to a manifest page: connect a wallet, then the purchase. */
export function Checkout({ listing, retired }: { listing: ListingRef; retired: boolean }) {
  // Test money arriving asks for the offer again, so what the page says matches the new balance.
  const [round, setRound] = useState(0);
  return (
    <div class="checkout">
      <h3>{retired ? 'Download what you own' : 'Buy with a browser wallet'}</h3>
      <WalletGate devnet={listing.devnet} chain={listing.chain} purpose={retired ? 'Connect' : 'Buy'}>
        {(connected, disconnect) => (
          <>
            <p class="muted">
              Connected: <code title={connected.address}>{shortAddress(connected.address)}</code> with{' '}
              {connected.wallet.name}.{' '}
              <button type="button" class="link" onClick={disconnect}>
                Disconnect
              </button>
            </p>
            {connected.wallet.test ? (
              <TestMoney connected={connected} onFunded={() => setRound((n) => n + 1)} />
            ) : null}
            <ListingPurchase key={round} listing={listing} connected={connected} />
          </>
        )}
      </WalletGate>
    </div>
  );
}
