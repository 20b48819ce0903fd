import { LRUCache } from 'lru-cache';
import Negotiator from 'negotiator';
import { z } from 'zod';
import type { App, AppContext } from '../context.js';
import { cacheSlot } from '../platform/cache/caches.js';
import { VERSIONS_SOLD } from '../platform/errors.js';
import { SITE_LINKS } from '../platform/http/discovery-links.js';
import { pageHeaders, renderPage } from '../platform/http/page.js';
import { rateLimitConfig } from '../platform/limits/rate-limit.js';
import { formatUsd } from '../platform/money/usd.js';
import { singleLineText } from '../platform/text-fields.js';
import { listingsOnShow, type ShownListingWithBuyers } from '../purchases/buyers.js';
import { offerFor } from '../purchases/pricing.js';
import { skillMarkdown } from './skill.js';

/**
 * GET /: what the service is, the guides, and the listings on show: the newest and the most
 * bought, or one ordered list with a search (`?q=`, `?sort=`, `?page=`). A plain GET form, rendered
 * on the server; the page runs no script. A query that cannot be run gets a page saying why (400).
 */

/** Longest search text taken, in characters, and most words in it. */
const SEARCH_MAX_LENGTH = 100;
const SEARCH_MAX_WORDS = 8;
/** Listings in each section of the home page, and on each page of a list. */
const SECTION_ROWS = 8;
const PAGE_ROWS = 20;
/** Deepest page served: the catalogue is read by offset, so how far it goes is bounded. */
const MAX_PAGE = 50;
const DESCRIPTION_CHARS = 200;
const HOME_HEADERS = pageHeaders({ forms: true });

type Order = 'newest' | 'most_bought';
const ORDER_NAMES: Record<Order, string> = { newest: 'Newest', most_bought: 'Most bought' };

/** What one request asks for: the home page, or one ordered (and maybe searched) list. */
type View = { kind: 'home' } | { kind: 'list'; words: string[]; order: Order; page: number };

const HomeQuery = z.object({
  q: singleLineText()
    .max(SEARCH_MAX_LENGTH)
    .transform((q) => q.trim().split(/\s+/).filter(Boolean))
    .refine((words) => words.length <= SEARCH_MAX_WORDS)
    .optional(),
  sort: z.enum(['newest', 'most_bought']).optional(),
  page: z
    .string()
    .regex(/^[1-9][0-9]{0,5}$/)
    .transform(Number)
    .refine((page) => page <= MAX_PAGE)
    .optional(),
});

/** What to change, for the person whose query could not be run. */
const REFUSALS: Record<keyof z.input<typeof HomeQuery>, string> = {
  q: `Search for plain text on one line: at most ${SEARCH_MAX_LENGTH} characters and ${SEARCH_MAX_WORDS} words.`,
  sort: 'Sort by newest or most_bought.',
  page: `Pages run from 1 to ${MAX_PAGE}.`,
};

/** The view asked for, or why it cannot be served. */
function viewOf(query: unknown): View | { refused: string } {
  const parsed = HomeQuery.safeParse(query);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path[0] as keyof typeof REFUSALS;
    // Query values are strings; anything else is a parameter given more than once.
    return { refused: issue.code === 'invalid_type' ? `Give ${field} once.` : REFUSALS[field] };
  }
  const { q = [], sort, page } = parsed.data;
  if (q.length === 0 && !sort && !page) return { kind: 'home' };
  return { kind: 'list', words: q, order: sort ?? 'newest', page: page ?? 1 };
}

/** The rendered pages by view, kept ten seconds (buyer counts move without a listing event) or until a listing changes. */
const homeCache = cacheSlot((caches) => {
  const cache = new LRUCache<string, string>({
    maxSize: 8_000_000,
    sizeCalculation: (html) => html.length,
    ttl: 10_000,
  });
  caches.onListingChanged(() => cache.clear());
  return cache;
});

async function renderView(ctx: AppContext, view: View): Promise<string> {
  const key = JSON.stringify(view);
  const cache = ctx.caches.get(homeCache);
  const cached = cache.get(key);
  if (cached) return cached;
  const shown = (order: Order, words: string[], limit: number, offset = 0) =>
    listingsOnShow(ctx.database.db, { order, words, limit, offset });
  const html =
    view.kind === 'home'
      ? homePage(ctx.config.baseUrl, {
          newest: await shown('newest', [], SECTION_ROWS),
          mostBought: await shown('most_bought', [], SECTION_ROWS),
        })
      : listPage(
          ctx.config.baseUrl,
          view,
          // One more than a page, to know whether there is a next one.
          await shown(view.order, view.words, PAGE_ROWS + 1, (view.page - 1) * PAGE_ROWS),
        );
  cache.set(key, html);
  return html;
}

export function registerHomeRoutes(app: App, ctx: AppContext): void {
  app.get(
    '/',
    { schema: { hide: true }, config: rateLimitConfig(ctx.config, 'public') },
    async (request, reply) => {
      const view = viewOf(request.query);
      reply.header('link', SITE_LINKS).header('vary', 'Accept');
      if (
        'kind' in view &&
        view.kind === 'home' &&
        new Negotiator(request.raw).mediaType(HOME_TYPES) === 'text/markdown'
      ) {
        return reply
          .header('cache-control', 'public, max-age=60')
          .header('x-content-type-options', 'nosniff')
          .type('text/markdown; charset=utf-8')
          .send(await agentHome(ctx));
      }
      reply.headers(HOME_HEADERS).type('text/html; charset=utf-8');
      if ('refused' in view) {
        return reply
          .code(400)
          .header('cache-control', 'no-store')
          .send(refusedPage(ctx.config.baseUrl, view.refused));
      }
      return reply.header('cache-control', 'public, max-age=60').send(await renderView(ctx, view));
    },
  );
}

/** What the home page can be served as: the page, or, to a client that prefers it, markdown for agents. */
const HOME_TYPES = ['text/html', 'text/markdown'];
const AGENT_HOME_ROWS = 20;

/**
 * The home page for an agent that asks for markdown: what the service is, the newest listings on
 * sale with their prices and manifests, then the buying skill (SKILL.md without its front matter),
 * so one request is enough to learn the service and how to buy.
 */
async function agentHome(ctx: AppContext): Promise<string> {
  const key = 'agent-home';
  const cache = ctx.caches.get(homeCache);
  const cached = cache.get(key);
  if (cached) return cached;
  const { baseUrl } = ctx.config;
  const newest = await listingsOnShow(ctx.database.db, {
    order: 'newest',
    words: [],
    limit: AGENT_HOME_ROWS,
    offset: 0,
  });
  const skill = skillMarkdown(baseUrl, ctx.config.payments);
  const lines = [
    `# repo402 at ${baseUrl}`,
    '',
    'Private git repositories sold as versioned zip artifacts, paid per listing in USDC over HTTP 402 (x402 v2). ' +
      `The API is described at ${baseUrl}/api/openapi.json, the resources on sale at ${baseUrl}/.well-known/x402; ` +
      'how to buy follows the list.',
    '',
    `## On sale here, newest first (${newest.length === AGENT_HOME_ROWS ? `the first ${AGENT_HOME_ROWS}` : 'all'})`,
    '',
    ...(newest.length === 0
      ? ['Nothing yet.']
      : newest.map(
          (listing) =>
            `- \`${listing.owner}/${listing.slug}\` ${listing.version}, ${formatUsd(offerFor(listing, listing.version).amountMicro)} USD: ` +
            `${listing.description.replace(/\s+/g, ' ').slice(0, DESCRIPTION_CHARS)} ` +
            `(manifest ${baseUrl}/api/label/${listing.owner}/${listing.slug})`,
        )),
    '',
    skill.slice(skill.indexOf('\n---\n', 4) + 5).trimStart(),
  ];
  const text = lines.join('\n');
  cache.set(key, text);
  return text;
}

/** The list of listings in `order` matching `words`, at `page` (an empty search and page 1 left out). */
function listHref(words: string[], order: Order, page = 1): string {
  const params = new URLSearchParams();
  if (words.length > 0) params.set('q', words.join(' '));
  params.set('sort', order);
  if (page > 1) params.set('page', String(page));
  return `/?${params}`;
}

function SearchForm({ words = [], order }: { words?: string[]; order?: Order }) {
  return (
    <search>
      <form class="search" method="get" action="/">
        <label for="q">Search listings</label>
        <div class="search-row">
          <input
            type="search"
            id="q"
            name="q"
            value={words.join(' ')}
            maxLength={SEARCH_MAX_LENGTH}
            placeholder="name, owner or keywords"
          />
          {order ? <input type="hidden" name="sort" value={order} /> : null}
          <button type="submit">Search</button>
        </div>
      </form>
    </search>
  );
}

function ListingItem({ listing }: { listing: ShownListingWithBuyers }) {
  const name = `${listing.owner}/${listing.slug}`;
  const price = offerFor(listing, listing.version).amountMicro;
  // By code point, so a cut never splits a character in two.
  const chars = [...listing.description];
  const description =
    chars.length > DESCRIPTION_CHARS
      ? `${chars.slice(0, DESCRIPTION_CHARS - 1).join('')}…`
      : listing.description;
  return (
    <li class="listing" data-listing={name}>
      <h3>
        <a href={`/${name}`}>
          <span class="muted">{listing.owner}/</span>
          {listing.slug}
        </a>
      </h3>
      <p class="listing-description">{description}</p>
      <p class="listing-facts">
        <span class="price" data-price-micro={String(price)}>
          {price === 0n ? 'Free' : `$${formatUsd(price)}`}
        </span>
        <span>
          version <code>{listing.version}</code>
        </span>
        <span>
          scan <span class={`badge ${listing.verdict === 'pass' ? 'ok' : 'bad'}`}>{listing.verdict}</span>
          {listing.advisoryFlaggedAt ? (
            <span class="badge bad" title="Advisories published after its scan match its dependencies">
              flagged
            </span>
          ) : null}
        </span>
        <span class="buyers">{listing.buyers === 1 ? '1 buyer' : `${listing.buyers} buyers`}</span>
        <a class="buy-link" href={`/${name}#buy`}>
          Buy<span class="visually-hidden"> {name}</span>
        </a>
      </p>
    </li>
  );
}

function ListingList({ listings, empty }: { listings: ShownListingWithBuyers[]; empty: string }) {
  if (listings.length === 0) return <p class="muted">{empty}</p>;
  return (
    <ol class="listings">
      {listings.map((listing) => (
        <ListingItem listing={listing} />
      ))}
    </ol>
  );
}

function Guides() {
  return (
    <>
      <p class="guides">
        New here? <a href="/docs/buying">How to buy</a> (by hand, with an agent, or over MCP) ·{' '}
        <a href="/docs/selling">How to sell</a> your repository
      </p>
      <p class="muted">{VERSIONS_SOLD}</p>
    </>
  );
}

function homePage(
  baseUrl: string,
  shown: { newest: ShownListingWithBuyers[]; mostBought: ShownListingWithBuyers[] },
): string {
  const sections = [
    { id: 'newest', order: 'newest' as const, listings: shown.newest },
    { id: 'most-bought', order: 'most_bought' as const, listings: shown.mostBought },
  ];
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
        <p class="actions">
          <a class="button" href="/app">
            Sell your code
          </a>
          <span>
            Sign in with your wallet, list a repository, push a tag, set a price.{' '}
            <a href="/docs/selling">How selling works</a>
          </span>
        </p>
        <Guides />
        <SearchForm />
        <div class="grid showcase">
          {sections.map((section) => (
            <section id={section.id} aria-labelledby={`${section.id}-title`}>
              <h2 id={`${section.id}-title`}>{ORDER_NAMES[section.order]}</h2>
              <ListingList listings={section.listings} empty="Nothing is on sale yet." />
              {section.listings.length > 0 ? (
                <p>
                  <a href={listHref([], section.order)}>
                    All listings, {ORDER_NAMES[section.order].toLowerCase()} first
                  </a>
                </p>
              ) : null}
            </section>
          ))}
        </div>
        <div class="grid">
          <div class="card">
            <h3>Buy with an agent</h3>
            <p>
              Request a listing's resource, get a <code>402</code> with the exact USDC authorization to sign,
              repeat the request with <code>PAYMENT-SIGNATURE</code>, receive a 5-minute download URL.{' '}
              <a href="/docs/buying">How to buy</a>.
            </p>
            <p>
              MCP server: <code>{`${baseUrl}/api/mcp`}</code>
            </p>
          </div>
          <div class="card">
            <h3>Sell your repository</h3>
            <p>
              In <a href="/app">the web app</a>, sign in with your wallet (new creators register with an
              invite code), list a repository, push your tags over SSH, then price and publish it. Programs do
              the same through the API. <a href="/docs/selling">How to sell</a>.
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

function listPage(
  baseUrl: string,
  view: Extract<View, { kind: 'list' }>,
  rows: ShownListingWithBuyers[],
): string {
  const { words, order, page } = view;
  const search = words.join(' ');
  const title = search ? `Listings matching “${search}”` : 'Listings';
  return renderPage({
    title,
    path: listHref(words, order, page),
    baseUrl,
    children: (
      <>
        <h1>{title}</h1>
        <Guides />
        <SearchForm words={words} order={order} />
        <nav class="orders" aria-label="Order">
          {(['newest', 'most_bought'] as const).map((option) =>
            option === order ? (
              <strong aria-current="page">{ORDER_NAMES[option]} first</strong>
            ) : (
              <a href={listHref(words, option)}>{ORDER_NAMES[option]} first</a>
            ),
          )}
        </nav>
        <ListingList
          listings={rows.slice(0, PAGE_ROWS)}
          empty={
            page > 1
              ? 'No more listings.'
              : search
                ? `No listing on sale matches “${search}”.`
                : 'Nothing is on sale yet.'
          }
        />
        <nav class="pages" aria-label="Pages">
          {page > 1 ? <a href={listHref(words, order, page - 1)}>Previous page</a> : null}
          {rows.length > PAGE_ROWS && page < MAX_PAGE ? (
            <a href={listHref(words, order, page + 1)}>Next page</a>
          ) : null}
        </nav>
      </>
    ),
  });
}

function refusedPage(baseUrl: string, reason: string): string {
  return renderPage({
    title: 'Search not run',
    path: '/',
    baseUrl,
    children: (
      <>
        <h1>That search could not be run</h1>
        <p class="notice" id="refused">
          {reason}
        </p>
        <SearchForm />
        <p>
          <a href="/">Back to the home page</a>
        </p>
      </>
    ),
  });
}
