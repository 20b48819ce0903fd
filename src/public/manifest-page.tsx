import { attestationUrl, KEYS_PATH } from '../attestations/urls.js';
import type { App, AppContext } from '../context.js';
import { CUT_STAGE_WORDS } from '../listings/cut-stages.js';
import { VERSIONS_SOLD } from '../platform/errors.js';
import { SITE_LINKS, SKILL_PATH } from '../platform/http/discovery-links.js';
import {
  pageHeaders,
  renderPage,
  TABLE_SCROLL_CLOSING,
  TableScroll,
  tableScrollOpening,
} from '../platform/http/page.js';
import { formatUsd } from '../platform/money/usd.js';
import type { PaymentNetwork } from '../platform/networks.js';
import { offerFor } from '../purchases/pricing.js';
import { recentReleases } from '../releases/service.js';
import {
  type AdvisoryFlagBody,
  type CutStageBody,
  type ReleaseBody,
  releaseFeedUrl,
} from '../releases/views.js';
import { ADVISORY_MAX_AGE_DAYS } from '../scan/dependency-checks.js';
import { escapeDisplay } from '../scan/paths.js';
import { registerListingDocument } from './listing-document.js';
import { listingUrls, type ManifestView } from './manifest.js';
import { buyScriptPath } from './web-app.js';

/**
 * GET /{owner}/{slug}: the manifest as a server-rendered page, readable without any script. The
 * README is the analysis' sanitised HTML; the Content-Security-Policy allows no script but the
 * buyer's own file from this origin (the checkout it adds to the Buy section), so markup slipping
 * through the sanitiser could still run nothing.
 */

// A README may show images from anywhere (and a wallet's icon is a data: URL); nothing else is
// loaded from outside.
const PAGE_HEADERS = pageHeaders({ images: 'https: data:', scripts: true });
const TREE_ROWS = 300;
/** `computed.warnings` in words: what the scan could not check. */
const WARNING_WORDS: Record<string, string> = {
  advisories_stale: `The advisory data behind the dependency checks is more than ${ADVISORY_MAX_AGE_DAYS} days old: a recently published vulnerability or malicious package may not be known to them.`,
  no_lockfile:
    'Dependencies are declared without a lockfile, so their versions are unknown and were not checked against advisories.',
  sbom_unavailable: 'No dependency manifest could be read, so there is no SBOM and no dependency check.',
};
const LOG_ROWS = 5;

/** The parts of `computed` the page shows; every field may be absent on an old analysis. */
interface ComputedView {
  artifact_class?: string;
  component_inventory?: Array<{ kind: string; count: number }>;
  file_count?: number;
  lines_of_code?: number;
  languages?: Record<string, unknown>;
  tree?: Array<{ path: string; size: number; binary: boolean }>;
  readme_html?: string;
  licence?: { spdx: string; verdict: string };
  inventory_sentence?: string;
  cadence_sentence?: string;
  warnings?: string[];
  scan?: {
    verdict?: string;
    counts?: { blocking: number; disclosed: number; review: number };
    capabilities?: { summary?: string };
  };
}

export function registerManifestPage(app: App, ctx: AppContext): void {
  registerListingDocument(app, ctx, {
    path: '/:owner/:slug',
    summary: 'The manifest page (server-rendered HTML)',
    mediaType: 'text/html',
    headers: { link: SITE_LINKS, ...PAGE_HEADERS },
    render: async (view) =>
      manifestPage(
        ctx.config.baseUrl,
        view,
        await recentReleases(ctx.database.db, view.listing, LOG_ROWS, {
          baseUrl: ctx.config.baseUrl,
          owner: view.listing.owner,
          slug: view.listing.slug,
        }),
        await checkoutFor(ctx),
      ),
  });
}

/**
 * What the buyer's script needs to know of the server: where it is, the chain paid on (the wallet
 * is switched to it), the chain's explorer, test money or not.
 */
export interface CheckoutSetting {
  script?: string;
  devnet: boolean;
  network: PaymentNetwork;
  explorerTxUrl?: string;
}

/** The chain the buyer's script switches the wallet to, named on the element it renders into. */
export function chainAttributes(network: PaymentNetwork): Record<string, string> {
  return {
    'data-chain-id': String(network.chainId),
    'data-chain-name': network.name,
    'data-chain-rpc': network.walletRpcUrl,
    'data-chain-explorer': network.explorerUrl,
  };
}

export async function checkoutFor(ctx: AppContext): Promise<CheckoutSetting> {
  return {
    script: await buyScriptPath(),
    devnet: ctx.config.payments.mode === 'devnet',
    network: ctx.config.payments.network,
    explorerTxUrl: ctx.config.payments.explorerTxUrl,
  };
}

export function manifestPage(
  baseUrl: string,
  view: ManifestView,
  log: ReleaseBody[],
  checkout: CheckoutSetting,
): string {
  const { listing, release } = view;
  const computed = (view.manifest.computed ?? {}) as ComputedView;
  const flag = view.manifest.advisory_flag as AdvisoryFlagBody | undefined;
  const urls = listingUrls(baseUrl, listing.owner, listing.slug);
  const price = offerFor(listing, release.version).amountMicro;
  const retired = listing.status === 'retired';
  const suspended = listing.suspendedAt !== null;
  const notSold = retired || suspended;
  const name = `${listing.owner}/${listing.slug}`;
  const attestation = attestationUrl(baseUrl, listing.owner, listing.slug, release.version);
  const feedUrl = releaseFeedUrl(baseUrl, listing.owner, listing.slug);
  return renderPage({
    title: name,
    description: listing.description.slice(0, 300),
    path: `/${name}`,
    baseUrl,
    scripts: checkout.script ? [checkout.script] : [],
    alternates: [{ href: feedUrl, type: 'application/atom+xml', title: `${name} releases (Atom)` }],
    children: (
      <article class="manifest">
        <p class="muted">
          <a href={`/${listing.owner}/${listing.slug}`}>{name}</a> · version <code>{release.version}</code>
        </p>
        <h1>{listing.slug}</h1>
        {retired ? (
          <p class="notice" id="retired">
            No longer sold. Holders still fetch every version they own.
          </p>
        ) : null}
        {suspended ? (
          <p class="notice" id="suspended">
            The operator of this service has suspended this listing: {listing.suspensionReason}. It is not
            sold while the suspension lasts; people who bought it still download the versions they own.
          </p>
        ) : null}
        <p class="lead" id="description">
          {listing.description}
        </p>
        <p id="trigger-hint">
          <strong>Use it when:</strong> {listing.triggerHint}
        </p>

        <div class="grid facts">
          <div class="card" id="price">
            <div class="muted">Price</div>
            <div class="big">{price === 0n ? 'Free' : `$${formatUsd(price)}`}</div>
            <div class="muted">
              {listing.updatePriceMicro === 0n
                ? 'Updates included'
                : `Updates $${formatUsd(listing.updatePriceMicro)} each`}
            </div>
          </div>
          <div class="card" id="version">
            <div class="muted">Latest version</div>
            <div class="big">{release.version}</div>
            <div class="muted">Published {release.publishedAt.toISOString().slice(0, 10)}</div>
          </div>
          <div class="card" id="scan">
            <div class="muted">Security scan</div>
            <div class="big">
              <span class={`badge ${computed.scan?.verdict === 'pass' ? 'ok' : 'bad'}`}>
                {computed.scan?.verdict ?? 'pass'}
              </span>
            </div>
            {computed.scan?.counts ? (
              <div class="muted">
                {computed.scan.counts.blocking} blocking · {computed.scan.counts.disclosed} disclosed ·{' '}
                {computed.scan.counts.review} for review
              </div>
            ) : null}
          </div>
        </div>
        {flag ? (
          <div class="notice" id="advisory-flag">
            <p>
              <strong>Flagged {flag.flagged_at.slice(0, 10)}:</strong> advisories published after this release
              was scanned match its dependencies. They would have failed the scan, whose result below is as it
              was at release time.
            </p>
            <ul>
              {flag.findings.map((finding) => (
                <li>
                  <code>{finding.rule_id}</code> ({finding.severity}) {finding.description}
                </li>
              ))}
            </ul>
          </div>
        ) : null}
        {(computed.warnings ?? []).length > 0 ? (
          <ul class="notice" id="warnings">
            {(computed.warnings ?? []).map((code) => (
              <li data-warning={code}>{WARNING_WORDS[code] ?? code}</li>
            ))}
          </ul>
        ) : null}
        {computed.scan?.capabilities?.summary ? (
          <p id="capabilities">
            <strong>What the code can do:</strong> {computed.scan.capabilities.summary}
          </p>
        ) : null}

        <section id="buy">
          <h2>Buy</h2>
          {retired ? (
            <p>This listing is retired: it is no longer sold. Holders fetch what they own as below.</p>
          ) : suspended ? (
            <p>This listing is suspended: it is not sold now. Holders fetch what they own as below.</p>
          ) : (
            <p id="what-is-sold">
              On sale: version <code>{release.version}</code>. {VERSIONS_SOLD}
            </p>
          )}
          <div
            id="checkout"
            data-owner={listing.owner}
            data-slug={listing.slug}
            data-version={release.version}
            data-devnet={checkout.devnet ? 'true' : undefined}
            data-retired={notSold ? 'true' : undefined}
            data-explorer={checkout.explorerTxUrl}
            {...chainAttributes(checkout.network)}
          />
          {notSold ? null : (
            <noscript>
              <p>
                Buying here in the browser needs JavaScript and a browser wallet: turn JavaScript on for this
                site to see the Buy button.{' '}
                {checkout.devnet ? 'This server runs the repo402 devnet: its prices are in test money.' : ''}
              </p>
            </noscript>
          )}
          <p id="library-link">
            Bought it already? <a href="/library">Your library</a> holds every version your wallet owns, to
            download again for free.
          </p>
          <h3>From a program or an agent</h3>
          <ol>
            {notSold ? null : (
              <>
                <li>
                  HTTP: <code>GET {urls.resource}</code> answers <code>402</code> with the USDC authorization
                  to sign (x402 v2, <code>{checkout.network.caip2}</code>); repeat it with{' '}
                  <code>PAYMENT-SIGNATURE</code> and <code>X-Quote-Id</code> for a 5-minute download URL.
                </li>
                <li>
                  MCP: call <code>purchase</code> with{' '}
                  <code>{`{"owner": "${listing.owner}", "slug": "${listing.slug}"}`}</code> on{' '}
                  <code>{`${baseUrl}/api/mcp`}</code>, sign the returned 402, call it again with{' '}
                  <code>payment_signature</code> and <code>quote_id</code>.
                </li>
              </>
            )}
            <li>
              Verify what you downloaded, offline, against this version's{' '}
              <a href={attestation}>signed attestation</a> and the service's{' '}
              <a href={KEYS_PATH}>public keys</a>, with the steps in <a href="/docs/buying">Buying</a>{' '}
              (section 4) or{' '}
              <code>
                repo402 verify --expect {name}@{release.version}
              </code>
              : it checks the zip is this listing's version and names the commit, tree and scan it was made
              from.
            </li>
            <li>
              Agent skill: <a href={SKILL_PATH}>buy-a-repo</a>. Manifest: <a href={urls.manifest}>JSON</a>.
              Holders re-fetch: <code>GET {urls.resource}/v/&lt;version&gt;</code> with{' '}
              <code>X-Wallet-Signature</code>. More in <a href="/docs/buying">Buying</a>.
            </li>
          </ol>
        </section>

        <section id="contents">
          <h2>What is inside</h2>
          <ul>
            {computed.artifact_class ? (
              <li>
                Class: <strong>{computed.artifact_class}</strong>
              </li>
            ) : null}
            {computed.inventory_sentence ? <li>{computed.inventory_sentence}</li> : null}
            {computed.file_count !== undefined ? (
              <li>
                {computed.file_count === 1 ? '1 file' : `${computed.file_count} files`}
                {computed.lines_of_code !== undefined
                  ? `, ${computed.lines_of_code === 1 ? '1 line' : `${computed.lines_of_code} lines`} of code`
                  : ''}
              </li>
            ) : null}
            {computed.licence ? (
              <li>
                Licence: <code>{computed.licence.spdx}</code> ({computed.licence.verdict})
              </li>
            ) : null}
            {computed.cadence_sentence ? <li>{computed.cadence_sentence}</li> : null}
            <li>
              Artifact SHA-256: <code class="hash">{release.artifactSha256}</code> ·{' '}
              <a id="attestation" href={attestation}>
                signed attestation
              </a>
            </li>
          </ul>
          {computed.component_inventory?.length ? (
            <p id="components">
              {computed.component_inventory.map((item) => (
                <span class="badge">
                  {item.kind} × {item.count}
                </span>
              ))}
            </p>
          ) : null}
          {computed.languages && Object.keys(computed.languages).length > 0 ? (
            <p id="languages">
              <strong>Languages:</strong> {Object.keys(computed.languages).join(', ')}
            </p>
          ) : null}
        </section>

        {computed.readme_html ? (
          <section id="readme">
            <h2>README</h2>
            <div
              class="prose readme"
              dangerouslySetInnerHTML={{ __html: readmeForPage(computed.readme_html) }}
            />
          </section>
        ) : null}

        {computed.tree?.length ? (
          <section id="tree">
            <h2>Files</h2>
            <details open={computed.tree.length <= 40}>
              <summary>{computed.tree.length} files</summary>
              <TableScroll label="Files">
                <table>
                  <tbody>
                    {computed.tree.slice(0, TREE_ROWS).map((file) => (
                      <tr>
                        <td>
                          <code>{escapeDisplay(file.path)}</code>
                        </td>
                        <td class="num">{file.binary ? 'binary' : `${file.size} B`}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableScroll>
              {computed.tree.length > TREE_ROWS ? (
                <p class="muted">
                  and {computed.tree.length - TREE_ROWS} more; the full tree is in the{' '}
                  <a href={urls.manifest}>manifest</a>.
                </p>
              ) : null}
            </details>
          </section>
        ) : null}

        <section id="releases">
          <h2>Releases</h2>
          <TableScroll label="Releases">
            <table class="reflow">
              <thead>
                <tr>
                  <th>Version</th>
                  <th>Published</th>
                  <th>Scan</th>
                  <th>Changes</th>
                  <th>Attestation</th>
                </tr>
              </thead>
              <tbody>
                {log.map((entry) => (
                  <tr>
                    <td>
                      <code>{entry.version}</code>
                      {!notSold && entry.version === release.version ? (
                        <span class="badge ok">on sale</span>
                      ) : null}
                    </td>
                    <td class="second" data-label="Published">
                      {entry.published_at.slice(0, 10)}
                    </td>
                    <td data-label="Scan">
                      <span
                        class={`badge ${entry.scan === 'pass' ? 'ok' : entry.scan === 'fail' ? 'bad' : ''}`}
                      >
                        {entry.scan}
                      </span>
                      {entry.stage ? <CutProgress stage={entry.stage} /> : null}
                      {entry.advisory_flag ? (
                        <span class="badge bad" title={entry.advisory_flag.advisory_ids.join(', ')}>
                          flagged
                        </span>
                      ) : null}
                      {entry.yanked ? (
                        <span class="badge bad" data-yanked={entry.version}>
                          withdrawn {entry.yanked.yanked_at.slice(0, 10)}: {entry.yanked.reason}
                        </span>
                      ) : null}
                    </td>
                    <td class="whole">{entry.changelog.split('\n')[0]}</td>
                    <td class="second" data-label="Attestation">
                      {entry.attestation_url ? (
                        <a href={entry.attestation_url}>
                          signed<span class="visually-hidden"> attestation of {entry.version}</span>
                        </a>
                      ) : null}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
          <p>
            <a href={urls.releases}>The full release log</a> (JSON), failing releases included, and the{' '}
            <a href={feedUrl} type="application/atom+xml">
              release feed
            </a>{' '}
            (Atom) for a feed reader.
          </p>
        </section>
      </article>
    ),
  });
}

/**
 * The README's code blocks and tables scroll sideways inside their own boxes on a phone, as the
 * guides' do: each box takes keyboard focus, a table's is named. The sanitiser leaves `<pre>` and
 * `<table>` without attributes, and text cannot hold a raw `<`, so this finds only those tags.
 */
function readmeForPage(readmeHtml: string): string {
  return readmeHtml
    .replaceAll('<pre>', '<pre tabindex="0">')
    .replaceAll('<table>', `${tableScrollOpening('Table in the README')}<table>`)
    .replaceAll('</table>', `</table>${TABLE_SCROLL_CLOSING}`);
}

/** A pending release's cut as a sentence: what it is doing and since when. */
function CutProgress({ stage }: { stage: CutStageBody }) {
  return (
    <span class="muted">
      {' '}
      {CUT_STAGE_WORDS[stage.name]} Since{' '}
      <time datetime={stage.entered_at}>{stage.entered_at.slice(0, 16).replace('T', ' ')} UTC</time>.
    </span>
  );
}
