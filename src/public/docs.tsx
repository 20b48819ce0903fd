import { readFile } from 'node:fs/promises';
import type { FastifyReply } from 'fastify';
import MarkdownIt, { type Token } from 'markdown-it';
import Negotiator from 'negotiator';
import type { App, AppContext } from '../context.js';
import { currentTerms } from '../identity/terms.js';
import { sshHost } from '../listings/ssh-host.js';
import { ERROR_CODES, ERRORS, type ErrorGroup } from '../platform/errors.js';
import { SITE_LINKS } from '../platform/http/discovery-links.js';
import {
  Markdown,
  pageHeaders,
  renderPage,
  TABLE_SCROLL_CLOSING,
  tableScrollOpening,
} from '../platform/http/page.js';
import { buyingGuide, sellingGuide } from './guides.js';

const markdown = new MarkdownIt({ html: false, linkify: true });
// On a phone a guide's wide table or code block scrolls inside its own box, never the page: the box
// takes keyboard focus (arrow keys scroll it), and a table's box is named by its columns.
markdown.renderer.rules.table_open = (tokens, index) =>
  `${tableScrollOpening(tableLabel(tokens, index))}\n<table>\n`;
markdown.renderer.rules.table_close = () => `</table>\n${TABLE_SCROLL_CLOSING}\n`;
const renderFence = markdown.renderer.rules.fence!;
markdown.renderer.rules.fence = (...args) => renderFence(...args).replace(/^<pre>/, '<pre tabindex="0">');

/** "Table: type, fingerprint": the header cells' text, from the table's opening token on. */
function tableLabel(tokens: Token[], open: number): string {
  const headers: string[] = [];
  for (let i = open; i < tokens.length && tokens[i]!.type !== 'thead_close'; i++)
    if (tokens[i]!.type === 'inline') headers.push(tokens[i]!.content.replaceAll('`', ''));
  return `Table: ${headers.join(', ')}`;
}

/** Inline markdown of our own table text (`code` spans), rendered without raw HTML. */
function inline(text: string) {
  return <span dangerouslySetInnerHTML={{ __html: markdown.renderInline(text) }} />;
}

export interface DocPage {
  path: string;
  title: string;
  summary: string;
  /** The page for this server: its base URL, and for the selling guide its SSH host and host keys. */
  render(ctx: AppContext): string | Promise<string>;
  /** The same text as markdown, for agents: served at `<path>.md` and to `Accept: text/markdown`. */
  markdown?(ctx: AppContext): string | Promise<string>;
}

const GROUPS: ErrorGroup[] = ['Payment', 'Listing', 'Identity', 'Limits', 'General'];

export const errorsPage: DocPage = {
  path: '/docs/errors',
  title: 'Error reference',
  summary: 'Every error code, its HTTP status, what it means and what to do.',
  markdown: ({ config: { baseUrl } }) =>
    [
      '# Error reference',
      '',
      `Every failure on every route has the body \`{code, message, docs_url, details?}\` (\`docs_url\` is ${baseUrl}/docs/errors#<code>). Match on \`code\`; the message may become more specific over time. There are ${ERROR_CODES.length} codes.`,
      ...GROUPS.flatMap((group) => [
        '',
        `## ${group}`,
        '',
        '| code | status | meaning | what to do |',
        '| --- | --- | --- | --- |',
        ...ERROR_CODES.filter((code) => ERRORS[code].group === group).map(
          (code) =>
            `| \`${code}\` | ${ERRORS[code].status} | ${ERRORS[code].meaning} | ${ERRORS[code].action} |`,
        ),
      ]),
      '',
    ].join('\n'),
  render: ({ config: { baseUrl } }) =>
    renderPage({
      title: 'Error reference',
      description: 'The error codes of the repo402 API',
      path: '/docs/errors',
      baseUrl,
      children: (
        <>
          <h1>Error reference</h1>
          <p class="lead">
            Every failure on every route has the body <code>{'{code, message, docs_url, details?}'}</code>.
            Match on <code>code</code>; the message may become more specific over time. There are{' '}
            {ERROR_CODES.length} codes.
          </p>
          {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a block that scrolls sideways must be reachable by keyboard. */}
          <pre tabIndex={0}>
            <code>
              {JSON.stringify(
                {
                  code: 'invalid_request',
                  message: 'The request did not validate',
                  docs_url: `${baseUrl}/docs/errors#invalid_request`,
                  details: { issues: [{ field: 'limit', reason: 'Too big: expected number to be <=100' }] },
                },
                null,
                2,
              )}
            </code>
          </pre>
          {GROUPS.map((group) => (
            <>
              <h2>{group}</h2>
              {ERROR_CODES.filter((code) => ERRORS[code].group === group).map((code) => (
                <section class="error-code" id={code}>
                  <h3>
                    <a href={`#${code}`}>
                      <code>{code}</code>
                    </a>{' '}
                    <span class="badge">{ERRORS[code].status}</span>
                  </h3>
                  <p>
                    <strong>Meaning.</strong> {inline(ERRORS[code].meaning)}
                  </p>
                  <p>
                    <strong>What to do.</strong> {inline(ERRORS[code].action)}
                  </p>
                </section>
              ))}
            </>
          ))}
        </>
      ),
    }),
};

export const termsPage: DocPage = {
  path: '/docs/terms',
  title: 'Terms',
  summary: 'The creator agreement and the buyer terms, with their version.',
  render: ({ config: { baseUrl, payments } }) => {
    const terms = currentTerms(baseUrl, payments.network);
    return renderPage({
      title: 'Terms',
      path: '/docs/terms',
      baseUrl,
      children: (
        <>
          <p class="muted">
            Version <code>{terms.version}</code>. Machine-readable at <a href="/api/terms">/api/terms</a>.
          </p>
          <section id="creator-agreement">
            <Markdown html={markdown.render(terms.text)} />
          </section>
          <section id="buyer-terms">
            <Markdown html={markdown.render(terms.buyer_terms.text)} />
          </section>
        </>
      ),
    });
  },
};

function guidePage(
  path: string,
  title: string,
  summary: string,
  source: (ctx: AppContext) => string | Promise<string>,
): DocPage {
  return {
    path,
    title,
    summary,
    markdown: source,
    render: async (ctx) =>
      renderPage({
        title,
        path,
        baseUrl: ctx.config.baseUrl,
        children: <Markdown html={markdown.render(await source(ctx))} />,
      }),
  };
}

export const buyingPage = guidePage(
  '/docs/buying',
  'Buying',
  'Read a manifest, pay over HTTP 402, download, fetch again; over HTTP, MCP or the agent skill.',
  (ctx) => buyingGuide(ctx.config.baseUrl, ctx.config.payments),
);

/**
 * The predicate type's own URI serves docs/ATTESTATIONS.md (read from the source tree, as the
 * migrations are), with this server's base URL filled in: one text for the repository and buyers.
 */
export const attestationsPage = guidePage(
  '/docs/attestations/release/v1',
  'Release attestations',
  'What a release’s signed statement records, its keys and rotation, and how to verify a download.',
  async (ctx) =>
    (await readFile(new URL('../../docs/ATTESTATIONS.md', import.meta.url), 'utf8')).replaceAll(
      '{base_url}',
      ctx.config.baseUrl,
    ),
);

export const sellingPage = guidePage(
  '/docs/selling',
  'Selling',
  'Register, list a repository, push tags, price and publish.',
  async (ctx) => sellingGuide(ctx.config.baseUrl, await sshHost(ctx)),
);

function docsIndex(baseUrl: string, pages: DocPage[]): string {
  return renderPage({
    title: 'Documentation',
    path: '/docs',
    baseUrl,
    children: (
      <>
        <h1>Documentation</h1>
        <p class="lead">How to buy and sell private code on repo402, for people and for agents.</p>
        <div class="grid">
          {pages.map((page) => (
            <a class="card" href={page.path}>
              <strong>{page.title}</strong>
              <div class="muted">{page.summary}</div>
            </a>
          ))}
          <a class="card" href="/api/openapi.json">
            <strong>OpenAPI 3.1</strong>
            <div class="muted">The machine-readable description of every route.</div>
          </a>
        </div>
      </>
    ),
  });
}

/** The guides are static text: no form, no image from elsewhere. */
const DOC_HEADERS = pageHeaders();

/**
 * Serves /docs and the given pages, and each page that has one as markdown at `<path>.md` and to a
 * client that prefers `text/markdown`. A page is rendered on its first request and kept: the
 * selling guide reads the SSH host keys (creating them in a fresh DATA_DIR), which a start need
 * not wait for.
 */
export function registerDocsRoutes(app: App, ctx: AppContext, pages: DocPage[]): void {
  const sources: Array<[string, Rendering, Rendering | undefined]> = [
    ['/docs', rendering(() => docsIndex(ctx.config.baseUrl, pages)), undefined],
    ...pages.map((page): [string, Rendering, Rendering | undefined] => [
      page.path,
      rendering(() => page.render(ctx)),
      page.markdown && rendering(() => page.markdown!(ctx)),
    ]),
  ];
  for (const [path, html, markdown] of sources) {
    const sendMarkdown = async (reply: FastifyReply) =>
      reply
        .header('link', SITE_LINKS)
        .header('x-content-type-options', 'nosniff')
        .header('cache-control', 'public, max-age=300')
        .type('text/markdown; charset=utf-8')
        .send(await markdown!());
    app.get(path, { schema: { hide: true } }, async (request, reply) => {
      if (markdown) {
        reply.header('vary', 'Accept');
        if (new Negotiator(request.raw).mediaType(PAGE_TYPES) === 'text/markdown') return sendMarkdown(reply);
      }
      return reply
        .header('link', SITE_LINKS)
        .headers(DOC_HEADERS)
        .header('cache-control', 'public, max-age=300')
        .type('text/html; charset=utf-8')
        .send(await html());
    });
    if (markdown)
      app.get(`${path}.md`, { schema: { hide: true } }, async (_request, reply) => sendMarkdown(reply));
  }
}

/** What a guide can be served as, the first preferred when the client does not say. */
const PAGE_TYPES = ['text/html', 'text/markdown'];

type Rendering = () => Promise<string>;

/** A page rendered on its first request and kept; a failed render is tried again next time. */
function rendering(render: () => string | Promise<string>): Rendering {
  let text: Promise<string> | undefined;
  return () =>
    (text ??= Promise.resolve()
      .then(render)
      .catch((error: unknown) => {
        text = undefined;
        throw error;
      }));
}
