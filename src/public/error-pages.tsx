import type { FastifyRequest } from 'fastify';
import Negotiator from 'negotiator';
import type { ComponentChildren } from 'preact';
import type { AppError } from '../platform/errors.js';
import type { ErrorPage } from '../platform/http/error-handler.js';
import { renderPage } from '../platform/http/page.js';

/**
 * What a person's browser is shown when one of the site's pages cannot be: a page in the site's
 * look with the same status, saying what happened and where to go (D-117). Only a request that
 * prefers HTML to JSON gets one: a browser navigating does, while a program sending no `Accept`,
 * `*\/*`, JSON or markdown keeps the spec's error body. The API (`/api`) and the well-known
 * documents are for programs and always answer with the body.
 */

/** Where every error page points: what the site is, and what is on sale. */
const HOME = { href: '/', text: 'Go to the home page' };
const ON_SALE = { href: '/?sort=newest', text: 'See the listings on sale' };
const DOCS = { href: '/docs', text: 'Read how buying and selling work' };

interface Words {
  title: string;
  text: ComponentChildren;
  links: Array<{ href: string; text: string }>;
}

/** The manifest page's route, whose 404 is about a listing rather than an address. */
const LISTING_ROUTE = '/:owner/:slug';

function wordsFor(request: FastifyRequest, error: AppError): Words {
  switch (error.code) {
    case 'not_found': {
      const params = request.params as { owner?: string; slug?: string } | undefined;
      if (request.routeOptions.url === LISTING_ROUTE && params?.owner && params.slug) {
        return {
          title: 'No listing here',
          text: (
            <>
              Nothing is for sale as <strong>{`${params.owner}/${params.slug}`}</strong>. No listing has that
              name, or its creator has not published it yet: a listing is shown here once it is published.
            </>
          ),
          links: [ON_SALE, HOME],
        };
      }
      return {
        title: 'Page not found',
        text: 'There is no page at this address. It may have moved, or the address may be mistyped.',
        links: [HOME, ON_SALE, DOCS],
      };
    }
    case 'rate_limited':
      return {
        title: 'Too many requests',
        text: `Pages were asked for faster than this service allows from your network. Wait ${
          error.retryAfterSeconds ?? 1
        } seconds, then reload the page.`,
        links: [HOME],
      };
    case 'paused':
      return {
        title: 'Paused for a moment',
        text: 'The service is paused, usually for maintenance. Try again in a few minutes: nothing anyone owns is affected.',
        links: [],
      };
    case 'internal':
      return {
        title: 'Something went wrong',
        text: `This page could not be shown because of a fault on our side. Reload it in a moment; if it keeps failing, give the operator this reference: ${request.id}.`,
        links: [HOME],
      };
    case 'invalid_request':
      return {
        title: 'This address could not be read',
        text: 'The address is not one this site can read. Check it for a mistake, or start again from the home page.',
        links: [HOME, ON_SALE],
      };
    default:
      return {
        title: 'This page cannot be shown',
        text: 'This page cannot be shown right now.',
        links: [HOME, ON_SALE],
      };
  }
}

/** Paths that are the site's pages, as opposed to the API and documents for programs. */
function isPagePath(path: string): boolean {
  return !/^\/(?:api|\.well-known)(?:\/|$)/.test(path);
}

/** What an error on a page path can be answered with, the body first when the client does not say. */
const ERROR_TYPES = ['application/json', 'text/html'];

export function errorPages(baseUrl: string): ErrorPage {
  return (request, error) => {
    const path = request.url.split('?')[0]!;
    if (!isPagePath(path) || new Negotiator(request.raw).mediaType(ERROR_TYPES) !== 'text/html')
      return undefined;
    const words = wordsFor(request, error);
    return renderPage({
      title: words.title,
      baseUrl,
      children: (
        <section class="error-page" aria-labelledby="error-title">
          <h1 id="error-title">{words.title}</h1>
          <p class="lead">{words.text}</p>
          {words.links.length > 0 ? (
            <ul class="error-links">
              {words.links.map((link) => (
                <li>
                  <a href={link.href}>{link.text}</a>
                </li>
              ))}
            </ul>
          ) : null}
          <p class="muted">Error {error.status}</p>
        </section>
      ),
    });
  };
}
