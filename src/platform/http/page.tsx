import type { ComponentChildren } from 'preact';
import { renderToString } from 'preact-render-to-string';
import { FAVICON_SVG_PATH } from './favicon.js';

/**
 * The shell of every server-rendered page. Preact escapes every interpolated value, so page code
 * cannot inject markup by accident; the only raw HTML is markdown we render with raw HTML off.
 */

export interface PageOptions {
  title: string;
  description?: string;
  /** Path of the page, for the canonical link; none for a page that is no address's own (an error). */
  path?: string;
  baseUrl: string;
  /** Module scripts of this origin the page loads (a page without them is complete without script). */
  scripts?: string[];
  /** Other representations of the page (`<link rel="alternate">`), such as a listing's release feed. */
  alternates?: Array<{ href: string; type: string; title: string }>;
  children: ComponentChildren;
}

export const STYLESHEET_PATH = '/static/site.css';

/**
 * The security headers of a server-rendered page. Its Content-Security-Policy: no script at all
 * unless `scripts` (then only this origin's files, talking only to this origin: no inline script),
 * its own stylesheet, never framed, and forms submitted only to itself when it has any (`forms`);
 * `images` adds image sources. `nosniff`, so nothing it serves is run as another type.
 */
export function pageHeaders({
  forms = false,
  images = '',
  scripts = false,
}: {
  forms?: boolean;
  images?: string;
  scripts?: boolean;
} = {}) {
  const csp = [
    "default-src 'none'",
    ...(scripts ? ["script-src 'self'", "connect-src 'self'"] : []),
    "style-src 'self'",
    `img-src 'self'${images ? ` ${images}` : ''}`,
    "base-uri 'none'",
    `form-action ${forms ? "'self'" : "'none'"}`,
    "frame-ancestors 'none'",
  ].join('; ');
  return { 'content-security-policy': csp, 'x-content-type-options': 'nosniff' };
}

export function renderPage({
  title,
  description,
  path,
  baseUrl,
  scripts = [],
  alternates = [],
  children,
}: PageOptions): string {
  const html = renderToString(
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{title === 'repo402' ? title : `${title} · repo402`}</title>
        {description ? <meta name="description" content={description} /> : null}
        {path === undefined ? null : <link rel="canonical" href={`${baseUrl}${path}`} />}
        <link rel="api-catalog" href="/.well-known/api-catalog" />
        {alternates.map((alternate) => (
          <link rel="alternate" type={alternate.type} href={alternate.href} title={alternate.title} />
        ))}
        <link rel="icon" href={FAVICON_SVG_PATH} type="image/svg+xml" />
        <link rel="stylesheet" href={STYLESHEET_PATH} />
        {scripts.map((src) => (
          <script type="module" src={src} />
        ))}
      </head>
      <body>
        <header class="site-header">
          <div class="wrap">
            <a class="brand" href="/">
              repo<span>402</span>
            </a>
            <nav>
              <a href="/library">Library</a>
              <a href="/docs">Docs</a>
              <a href="/docs/errors">Errors</a>
              <a href="/api/openapi.json">OpenAPI</a>
              <a href="/.well-known/api-catalog">Catalog</a>
            </nav>
          </div>
        </header>
        <main class="wrap">{children}</main>
        <footer class="site-footer">
          <div class="wrap">
            <span>repo402: private code, sold per listing over HTTP 402.</span>
            <a href="/docs/terms">Terms</a>
            <a href="/api/health">Status</a>
          </div>
        </footer>
      </body>
    </html>,
  );
  return `<!doctype html>${html}`;
}

/** Markup we produced ourselves from trusted markdown (docs, terms). */
export function Markdown({ html }: { html: string }) {
  return <div class="prose" dangerouslySetInnerHTML={{ __html: html }} />;
}

/**
 * A table that may be wider than a phone: it scrolls sideways inside this box, never the page. The
 * box is named, and takes keyboard focus so arrow keys scroll it; shadows mark a clipped edge
 * (`.table-scroll` in SITE_CSS). Markdown tables get the same box (docs.tsx).
 */
export function TableScroll({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard.
    <section class="table-scroll" aria-label={label} tabIndex={0}>
      {children}
    </section>
  );
}

/** The same box around a table in markup we write as text (markdown, a README): its opening tag. */
export function tableScrollOpening(label: string): string {
  const attribute = label.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;');
  return `<section class="table-scroll" tabindex="0" aria-label="${attribute}">`;
}
export const TABLE_SCROLL_CLOSING = '</section>';

export const SITE_CSS = `
:root {
  --ink: #0f172a; --muted: #475569; --line: #e2e8f0; --bg: #ffffff; --soft: #f8fafc;
  --accent: #0f766e; --accent-soft: #ccfbf1; --warn: #b45309; --bad: #b91c1c;
  --mono: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace;
}
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body {
  margin: 0; color: var(--ink); background: var(--bg);
  font: 16px/1.6 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  /* A word longer than the line (an address, a hash, a name) breaks rather than widening the page. */
  overflow-wrap: break-word;
}
.wrap { max-width: 980px; margin: 0 auto; padding: 0 20px; }
a { color: var(--accent); text-underline-offset: 2px; }
.site-header { border-bottom: 1px solid var(--line); background: var(--soft); }
.site-header .wrap { display: flex; align-items: center; justify-content: space-between; gap: 16px; min-height: 56px; flex-wrap: wrap; }
.brand { font-weight: 700; font-size: 20px; color: var(--ink); text-decoration: none; letter-spacing: -0.01em; }
.brand span { color: var(--accent); }
nav { display: flex; gap: 18px; flex-wrap: wrap; }
nav a { color: var(--muted); text-decoration: none; font-size: 15px; }
nav a:hover { color: var(--ink); }
main.wrap { padding-top: 28px; padding-bottom: 48px; min-height: 70vh; }
.site-footer { border-top: 1px solid var(--line); color: var(--muted); font-size: 14px; }
.site-footer .wrap { display: flex; gap: 18px; padding-top: 18px; padding-bottom: 18px; flex-wrap: wrap; }
h1 { font-size: 30px; line-height: 1.25; margin: 0 0 12px; letter-spacing: -0.02em; }
h2 { font-size: 21px; margin: 32px 0 10px; }
h3 { font-size: 17px; margin: 22px 0 8px; }
p.lead { font-size: 18px; color: var(--muted); margin-top: 0; }
code, pre { font-family: var(--mono); font-size: 14px; }
code { background: var(--soft); border: 1px solid var(--line); border-radius: 4px; padding: 1px 5px; }
pre { background: #0b1220; color: #e2e8f0; padding: 14px 16px; border-radius: 8px; overflow-x: auto; line-height: 1.5; }
pre code { background: none; border: 0; padding: 0; color: inherit; }
table { border-collapse: collapse; width: 100%; margin: 12px 0; font-size: 15px; }
th, td { text-align: left; padding: 8px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: var(--soft); font-weight: 600; }
/*
 * A box that scrolls sideways says so: a shadow on each edge with more beyond it (the white covers
 * scroll with the content, the shadows stay with the box, so each shows only while content is
 * clipped there). Code blocks scroll the same way, on their dark ground.
 */
.table-scroll {
  overflow-x: auto; margin: 12px 0;
  background:
    linear-gradient(to right, #fff 30%, rgb(255 255 255 / 0)) left / 40px 100% no-repeat local,
    linear-gradient(to left, #fff 30%, rgb(255 255 255 / 0)) right / 40px 100% no-repeat local,
    radial-gradient(farthest-side at 0 50%, rgb(15 23 42 / 0.25), transparent) left / 14px 100% no-repeat scroll,
    radial-gradient(farthest-side at 100% 50%, rgb(15 23 42 / 0.25), transparent) right / 14px 100% no-repeat scroll;
}
.table-scroll > table { margin: 0; }
.table-scroll:focus-visible, pre:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
.card { border: 1px solid var(--line); border-radius: 10px; padding: 16px 18px; margin: 14px 0; background: var(--bg); }
.card > h3:first-child { margin-top: 0; }
a.card { display: block; text-decoration: none; color: inherit; }
a.card:hover { border-color: var(--accent); }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(240px, 1fr)); gap: 14px; }
.badge { display: inline-block; font-size: 13px; font-weight: 600; padding: 2px 9px; border-radius: 999px; background: var(--soft); border: 1px solid var(--line); color: var(--muted); }
.badge.ok { background: var(--accent-soft); color: var(--accent); border-color: #99f6e4; }
.badge.warn { background: #fef3c7; color: var(--warn); border-color: #fde68a; }
.badge.bad { background: #fee2e2; color: var(--bad); border-color: #fecaca; }
.error-code { scroll-margin-top: 16px; border-top: 1px solid var(--line); padding-top: 6px; }
.error-code:target { background: #fffbeb; }
.muted { color: var(--muted); }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
.prose img { max-width: 100%; }
.big { font-size: 24px; font-weight: 700; margin: 2px 0; }
.notice { background: #fef3c7; border: 1px solid #fde68a; color: var(--warn); border-radius: 8px; padding: 10px 14px; font-weight: 600; }
ul.notice { padding-left: 34px; }
.facts .card { margin: 0; }
.num { text-align: right; white-space: nowrap; color: var(--muted); }
code.hash { word-break: break-all; }
.badge + .badge, code + .badge { margin-left: 6px; }
.readme { border: 1px solid var(--line); border-radius: 10px; padding: 4px 18px; overflow-x: auto; }
details summary { cursor: pointer; color: var(--muted); }
.guides { font-size: 17px; }
.search { margin: 18px 0 8px; }
.search label { display: block; font-weight: 600; margin-bottom: 4px; }
.search-row { display: flex; gap: 8px; }
.search input[type=search] { flex: 1; min-width: 0; font: inherit; padding: 7px 10px; border: 1px solid #94a3b8; border-radius: 8px; }
.search button { font: inherit; font-weight: 600; padding: 7px 16px; border: 0; border-radius: 8px; background: var(--accent); color: #fff; cursor: pointer; }
.showcase { align-items: start; }
.listings { list-style: none; padding: 0; margin: 0; }
.listing { border-bottom: 1px solid var(--line); padding: 10px 0; }
.listing h3 { margin: 0; font-size: 17px; overflow-wrap: anywhere; }
.listing-description { margin: 2px 0 4px; overflow-wrap: anywhere; }
.listing-facts { margin: 0; display: flex; flex-wrap: wrap; gap: 4px 14px; color: var(--muted); font-size: 14px; }
.listing-facts .price { color: var(--ink); font-weight: 700; }
.orders, .pages { display: flex; gap: 18px; flex-wrap: wrap; margin: 12px 0; }
.actions { display: flex; flex-wrap: wrap; align-items: center; gap: 10px 16px; margin: 18px 0; }
a.button { display: inline-block; font-weight: 600; padding: 8px 18px; border-radius: 8px; background: var(--accent); color: #fff; text-decoration: none; }
a.button:hover { background: #115e59; }
/* The buyer's script: the checkout in a manifest page's Buy section, and the library. */
.checkout { border: 1px solid var(--line); border-radius: 10px; padding: 14px 18px; margin: 14px 0; background: var(--soft); }
.checkout h3 { margin-top: 0; }
.checkout button, #library button { font: inherit; font-weight: 600; padding: 7px 16px; min-height: 40px; border: 1px solid #94a3b8; border-radius: 8px; background: var(--bg); color: var(--ink); cursor: pointer; }
.checkout button.primary, #library button.primary { background: var(--accent); border-color: var(--accent); color: #fff; }
.checkout button.link, #library button.link { min-height: 0; padding: 0; border: 0; background: none; color: var(--accent); font-weight: inherit; text-decoration: underline; }
.checkout button:disabled, #library button:disabled { opacity: 0.6; cursor: wait; }
.wallet-list { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: 8px; }
.wallet-list button { display: inline-flex; align-items: center; gap: 8px; }
.offer-terms { display: grid; grid-template-columns: max-content 1fr; gap: 4px 14px; }
.offer-terms dt { color: var(--muted); }
.offer-terms dd { margin: 0; }
p.success { color: var(--accent); font-weight: 600; }
.test-money-note { background: #fef3c7; border: 1px solid #fde68a; color: #78350f; border-radius: 8px; padding: 10px 14px; }
.purchase:focus { outline: none; }
.checkout progress { width: 100%; }
.shelf h2 { margin-top: 0; font-size: 20px; }
.owned-versions { list-style: none; padding: 0; }
.owned-versions li { display: flex; flex-wrap: wrap; align-items: center; gap: 10px; margin: 6px 0; }
@media (max-width: 600px) {
  body { font-size: 15px; }
  h1 { font-size: 25px; }
  .site-header .wrap { padding-top: 8px; padding-bottom: 8px; }
  .wrap { padding: 0 16px; }
  /*
   * A table marked "reflow" becomes one block per row on a phone: its header row stays for screen
   * readers only, and a cell with a "data-label" shows it (generated text they skip).
   */
  table.reflow, table.reflow tbody { display: block; }
  table.reflow thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
  table.reflow tr { display: flex; flex-wrap: wrap; align-items: center; gap: 4px 14px; padding: 10px 0; border-bottom: 1px solid var(--line); }
  table.reflow td { display: block; padding: 0; border: 0; }
  table.reflow td[data-label]::before { content: attr(data-label) " " / ""; color: var(--muted); }
  /* Cells on the first line, then those of class second (the row's ::after breaks the line), then a whole one. */
  table.reflow tr::after { content: ""; order: 1; flex-basis: 100%; }
  table.reflow td.second { order: 2; }
  table.reflow td.whole { order: 3; flex-basis: 100%; }
}
`;
