import type { App, AppContext } from '../context.js';
import { SITE_LINKS } from '../platform/http/discovery-links.js';
import { pageHeaders, renderPage } from '../platform/http/page.js';
import { rateLimitConfig } from '../platform/limits/rate-limit.js';
import { type CheckoutSetting, chainAttributes, checkoutFor } from './manifest-page.js';

/**
 * GET /library: a person's library, what their wallet owns. The page is a frame the buyer's script
 * fills in after the wallet proves it is theirs (entitlement state is never disclosed without a
 * signature); without script it says what the library is and where the same list lives for programs.
 */
const LIBRARY_HEADERS = pageHeaders({ images: 'data:', scripts: true });

export function registerLibraryPage(app: App, ctx: AppContext): void {
  app.get(
    '/library',
    { schema: { hide: true }, config: rateLimitConfig(ctx.config, 'public') },
    async (_request, reply) =>
      reply
        .headers(LIBRARY_HEADERS)
        .header('link', SITE_LINKS)
        .header('cache-control', 'public, max-age=60')
        .type('text/html; charset=utf-8')
        .send(libraryPage(ctx.config.baseUrl, await checkoutFor(ctx))),
  );
}

export function libraryPage(baseUrl: string, checkout: CheckoutSetting): string {
  return renderPage({
    title: 'Your library',
    description: 'Every listing and version your wallet owns, to download again for free.',
    path: '/library',
    baseUrl,
    scripts: checkout.script ? [checkout.script] : [],
    children: (
      <article>
        <h1>Your library</h1>
        <p class="lead">
          Everything your wallet has bought here, every version of it, to download again for free, and the
          updates on sale since.
        </p>
        <div
          id="library"
          data-devnet={checkout.devnet ? 'true' : undefined}
          data-explorer={checkout.explorerTxUrl}
          {...chainAttributes(checkout.network)}
        >
          <noscript>
            <p class="notice">
              The library needs JavaScript and a browser wallet: your wallet signs a message to prove it is
              yours, and the page then lists what it owns.
            </p>
          </noscript>
        </div>
        <p class="muted">
          Agents and programs read the same list with a wallet signature: see{' '}
          <a href="/docs/buying">Buying</a>.
        </p>
      </article>
    ),
  });
}
