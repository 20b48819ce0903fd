import { createHash } from 'node:crypto';

/**
 * The site's icon: a white "4" on the brand's teal. Browsers take an icon by its Content-Type, not
 * its name, so `/favicon.ico` (fetched unasked) answers this same SVG and the two cannot disagree.
 */
export const FAVICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">' +
  '<rect width="32" height="32" rx="6" fill="#0f766e"/>' +
  '<path fill="#fff" fill-rule="evenodd" d="M18 6h4v12h3v4h-3v4h-4v-4H7v-4zm0 6.5L11.5 18H18z"/>' +
  '</svg>\n';

/** Named by its content, so pages may let browsers keep it for a year. */
export const FAVICON_SVG_PATH = `/static/icon-${createHash('sha256').update(FAVICON_SVG).digest('hex').slice(0, 12)}.svg`;
