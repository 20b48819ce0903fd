import { render } from 'preact';
import { Checkout } from './checkout.js';
import { Library } from './library.js';

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
      }}
      retired={data.retired === 'true'}
    />,
    checkout,
  );
}

const library = document.getElementById('library');
if (library) {
  render(<Library devnet={library.dataset.devnet === 'true'} explorer={library.dataset.explorer} />, library);
}
