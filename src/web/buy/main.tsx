import { render } from 'preact';
import { Checkout } from './checkout.js';
import { Library } from './library.js';
import { pageChain } from './wallets.js';

/**
 * The buyer's script: the checkout in a manifest page's Buy section, and the library. The pages are
 * server-rendered and complete without it; it only adds what needs a wallet.
 */
const checkout = document.getElementById('checkout');
if (checkout) {
  const data = checkout.dataset;
  render(
    <Checkout
      listing={{
        owner: data.owner ?? '',
        slug: data.slug ?? '',
        explorer: data.explorer,
        devnet: data.devnet === 'true',
        chain: pageChain(data),
      }}
      retired={data.retired === 'true'}
    />,
    checkout,
  );
}

const library = document.getElementById('library');
if (library) {
  const data = library.dataset;
  render(
    <Library devnet={data.devnet === 'true'} chain={pageChain(data)} explorer={data.explorer} />,
    library,
  );
}
