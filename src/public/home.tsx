import type { App, AppContext } from '../context.js';
import { renderPage, SITE_CSS, STYLESHEET_PATH } from '../platform/page.js';
import { API_CATALOG_LINK } from './catalog.js';

function homePage(baseUrl: string): string {
  return renderPage({
    title: 'repo402',
    description: 'Private git repositories sold as versioned, scanned zip artifacts over HTTP 402.',
    path: '/',
    baseUrl,
    children: (
      <>
        <h1>Private code, sold per listing over HTTP 402</h1>
        <p class="lead">
          Creators list a private repository. Every <code>vX.Y.Z</code> tag becomes a release that is
          snapshotted, analysed, scanned and logged publicly. Buyers, people or agents with a wallet, pay in
          USDC and download a zip; what they own they re-fetch free, forever.
        </p>
        <div class="grid">
          <div class="card">
            <h3>Buy with an agent</h3>
            <p>
              Request a listing's resource, get a <code>402</code> with the exact USDC authorization to sign,
              repeat the request with <code>PAYMENT-SIGNATURE</code>, receive a 5-minute download URL.
            </p>
            <p>
              MCP server: <code>{`${baseUrl}/api/mcp`}</code>
            </p>
          </div>
          <div class="card">
            <h3>Sell your repository</h3>
            <p>
              Register with an invite code and a signed payout address, create a listing and push your tags
              over SSH. <a href="/docs/selling">How to sell</a>.
            </p>
          </div>
          <div class="card">
            <h3>For machines</h3>
            <ul>
              <li>
                <a href="/.well-known/api-catalog">API catalog</a> (RFC 9727)
              </li>
              <li>
                <a href="/api/openapi.json">OpenAPI 3.1</a>
              </li>
              <li>
                <a href="/docs/errors">Error reference</a>
              </li>
              <li>
                <a href="/api/terms">Terms</a>
              </li>
            </ul>
          </div>
        </div>
      </>
    ),
  });
}

export function registerHomeRoutes(app: App, ctx: AppContext): void {
  const html = homePage(ctx.config.baseUrl);
  app.get('/', { schema: { hide: true } }, async (_request, reply) =>
    reply
      .header('link', API_CATALOG_LINK)
      .header('cache-control', 'public, max-age=60')
      .type('text/html; charset=utf-8')
      .send(html),
  );
  app.get(STYLESHEET_PATH, { schema: { hide: true } }, async (_request, reply) =>
    reply.header('cache-control', 'public, max-age=3600').type('text/css; charset=utf-8').send(SITE_CSS),
  );
}
