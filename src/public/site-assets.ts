import type { FastifyReply } from 'fastify';
import type { App } from '../context.js';
import { FAVICON_SVG, FAVICON_SVG_PATH } from '../platform/http/favicon.js';
import { SITE_CSS, STYLESHEET_PATH } from '../platform/http/page.js';

/**
 * The files every page loads: the stylesheet and the icon. `/favicon.ico` keeps a fixed name
 * (browsers fetch it unasked) and answers the same SVG, kept a week; the linked SVG is named by its
 * content, so a year. Neither counts against a rate limit: a page's own files are not what a limit protects.
 */
export function registerSiteAssets(app: App): void {
  const options = { schema: { hide: true } };
  app.get(STYLESHEET_PATH, options, async (_request, reply) =>
    reply.header('cache-control', 'public, max-age=3600').type('text/css; charset=utf-8').send(SITE_CSS),
  );
  const icon = (maxAge: string) => async (_request: unknown, reply: FastifyReply) =>
    reply
      .header('cache-control', `public, ${maxAge}`)
      .header('x-content-type-options', 'nosniff')
      .type('image/svg+xml')
      .send(FAVICON_SVG);
  app.get(FAVICON_SVG_PATH, options, icon('max-age=31536000, immutable'));
  app.get('/favicon.ico', options, icon('max-age=604800'));
}
