import MarkdownIt from 'markdown-it';
import sanitizeHtml from 'sanitize-html';

// Raw HTML off: tags in the README render as text. linkify off: only links the author wrote.
const markdown = new MarkdownIt({ html: false, linkify: false, typographer: false });
const isAbsoluteHttp = (url: string) => /^https?:\/\//i.test(url);
const keepsLink = (href: string) => href.startsWith('#') || isAbsoluteHttp(href) || /^mailto:/i.test(href);

// A relative link points into the private repository, which has no public address: render its
// text without the link. A relative image is dropped.
const renderToken = markdown.renderer.renderToken.bind(markdown.renderer);
markdown.renderer.rules.link_open = (tokens, idx, options, _env, self) => {
  const token = tokens[idx]!;
  if (keepsLink(String(token.attrGet('href') ?? ''))) return self.renderToken(tokens, idx, options);
  const close = tokens.findIndex((t, j) => j > idx && t.type === 'link_close' && t.level === token.level);
  if (close > 0) tokens[close]!.meta = { dropped: true };
  return '';
};
markdown.renderer.rules.link_close = (tokens, idx, options) =>
  (tokens[idx]!.meta as { dropped?: boolean } | null)?.dropped ? '' : renderToken(tokens, idx, options);
const renderImage = markdown.renderer.rules.image!;
markdown.renderer.rules.image = (tokens, idx, options, env, self) =>
  isAbsoluteHttp(String(tokens[idx]!.attrGet('src') ?? ''))
    ? renderImage(tokens, idx, options, env, self)
    : '';

const README = /^readme(\.(md|markdown|mdx|txt|rst))?$/i;

/** The root README's path, preferring Markdown. */
export function findReadme(paths: Iterable<string>): string | undefined {
  const roots = [...paths].filter((p) => !p.includes('/') && README.test(p));
  return roots.sort((a, b) => Number(!/\.md$/i.test(a)) - Number(!/\.md$/i.test(b)) || a.localeCompare(b))[0];
}

/**
 * The README as safe HTML. The repository is private, so a relative link or image has no public
 * address: relative links become their text, relative images are dropped, in-page anchors stay.
 * Only http(s) and mailto links survive; every link opens with rel="nofollow noopener noreferrer ugc".
 */
export function renderReadme(source: string, fileName: string): string {
  const html = /\.(md|markdown|mdx)$/i.test(fileName)
    ? markdown.render(source)
    : `<pre>${markdown.utils.escapeHtml(source)}</pre>`;
  return sanitizeHtml(html, {
    allowedTags: [
      'h1',
      'h2',
      'h3',
      'h4',
      'h5',
      'h6',
      'p',
      'br',
      'hr',
      'blockquote',
      'pre',
      'code',
      'em',
      'strong',
      's',
      'del',
      'ul',
      'ol',
      'li',
      'a',
      'img',
      'table',
      'thead',
      'tbody',
      'tr',
      'th',
      'td',
    ],
    allowedAttributes: {
      a: ['href', 'title', 'rel'],
      img: ['src', 'alt', 'title'],
      code: ['class'],
      th: ['style'],
      td: ['style'],
      ol: ['start'],
    },
    allowedStyles: {
      th: { 'text-align': [/^(left|right|center)$/] },
      td: { 'text-align': [/^(left|right|center)$/] },
    },
    allowedSchemes: ['http', 'https', 'mailto'],
    allowedSchemesAppliedToAttributes: ['href', 'src'],
    allowProtocolRelative: false,
    allowedClasses: { code: [/^language-[A-Za-z0-9_+-]+$/] },
    exclusiveFilter: (frame) => frame.tag === 'img' && !isAbsoluteHttp(frame.attribs.src ?? ''),
    transformTags: { a: sanitizeHtml.simpleTransform('a', { rel: 'nofollow noopener noreferrer ugc' }) },
  });
}
