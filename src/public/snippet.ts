import type { App, AppContext } from '../context.js';
import { formatUsd } from '../platform/money/usd.js';
import { registerListingDocument } from './listing-document.js';
import { listingUrls, type ManifestView } from './manifest.js';

/**
 * GET /api/snippet/{owner}/{slug}: a markdown preamble a buyer pastes into a downstream agent's
 * instructions so it checks for a newer version before each run. Updates that are included and
 * updates that cost money call for different instructions, so the wording differs.
 */
export function snippetMarkdown(baseUrl: string, { listing, release }: ManifestView): string {
  const urls = listingUrls(baseUrl, listing.owner, listing.slug);
  const name = `${listing.owner}/${listing.slug}`;
  const updates =
    listing.updatePriceMicro === 0n
      ? `Updates are included with the purchase: when \`version\` is newer than the one you have, fetch it
with \`GET ${urls.resource}\` and the same \`X-Wallet-Signature\`; it costs nothing.`
      : `Updates are paid: moving from the version you hold to the newest costs one update price,
${formatUsd(listing.updatePriceMicro)} USD (\`update_price_micro\` ${listing.updatePriceMicro}), however many versions you skip; you
do not pay for each version in between. When \`version\` is newer than the one you have, do not
buy it on your own: tell the operator what changed (version status with your signature carries
\`update.releases\` and \`update.changes\`; the whole log is \`GET ${urls.releases}\`) and the price,
and buy it through \`GET ${urls.resource}\` (an \`update\` 402) only when they approve.`;
  return `<!-- repo402 snippet for ${name}: paste into your agent's instructions -->
## Dependency: ${name} (repo402)

This workspace uses \`${name}\`, bought on repo402, installed at version ${release.version}.

Before each run, check for a newer version:

\`\`\`http
GET ${urls.version}
X-Wallet-Signature: <base64 {"address","nonce","signature"} over a wallet_ownership challenge>
\`\`\`

Compare its \`version\` with the installed one. ${updates}

Verify every download against \`artifact_sha256\` before unpacking it. Owned versions stay
fetchable forever: \`GET ${urls.resource}/v/<version>\`. Manifest: ${urls.manifest}
`;
}

export function registerSnippetRoute(app: App, ctx: AppContext): void {
  registerListingDocument(app, ctx, {
    path: '/api/snippet/:owner/:slug',
    summary: 'A paste-ready markdown preamble telling a downstream agent to check for updates',
    mediaType: 'text/markdown',
    render: (view) => snippetMarkdown(ctx.config.baseUrl, view),
  });
}
