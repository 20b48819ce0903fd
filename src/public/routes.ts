import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { registerAttestationKeysRoute } from '../attestations/routes.js';
import type { AppContext } from '../context.js';
import { registerCatalogRoute } from './catalog.js';
import { registerCreatorManifestRoute } from './creator-manifest.js';
import {
  attestationsPage,
  buyingPage,
  errorsPage,
  registerDocsRoutes,
  sellingPage,
  termsPage,
} from './docs.js';
import { registerHealthRoute, registerReadinessRoute } from './health.js';
import { registerHomeRoutes } from './home.js';
import { registerLabelRoute } from './label.js';
import { registerLibraryPage } from './library-page.js';
import { registerManifestPage } from './manifest-page.js';
import { registerOpenApiRoute } from './openapi.js';
import { registerReleaseFeed } from './release-feed.js';
import { registerSiteAssets } from './site-assets.js';
import { registerSkillRoutes } from './skill.js';
import { registerSnippetRoute } from './snippet.js';
import { registerTermsRoute } from './terms-route.js';
import { registerWebApp } from './web-app.js';
import { registerX402DiscoveryRoute } from './x402-discovery.js';

/**
 * Public has two plugins because the OpenAPI document lists paths in registration order, with
 * the service's own documents first and the per-listing documents after the domains' APIs; a
 * third, the creator's preview of a listing's documents, sits beside the listing routes. None has
 * a prefix: public paths span `/`, `/api`, `/docs` and `/.well-known`.
 */

/** The service's own pages and documents: home, its stylesheet and icon, health, terms, API catalogue, skill, docs, OpenAPI, the creator app, the buyer's library. */
export const siteRoutes: FastifyPluginAsyncZod<{ ctx: AppContext }> = async (app, { ctx }) => {
  registerHomeRoutes(app, ctx);
  registerSiteAssets(app);
  registerHealthRoute(app, ctx);
  registerReadinessRoute(app, ctx);
  registerTermsRoute(app, ctx);
  registerCatalogRoute(app, ctx);
  registerAttestationKeysRoute(app, ctx);
  registerSkillRoutes(app, ctx);
  registerDocsRoutes(app, ctx, [buyingPage, sellingPage, attestationsPage, errorsPage, termsPage]);
  registerOpenApiRoute(app);
  registerWebApp(app, ctx);
  registerLibraryPage(app, ctx);
};

/** What anyone may read about a listing, each under the `public` rate limit: manifest, page, release feed, snippet, x402 discovery. */
export const listingDocumentRoutes: FastifyPluginAsyncZod<{ ctx: AppContext }> = async (app, { ctx }) => {
  registerLabelRoute(app, ctx);
  registerManifestPage(app, ctx);
  registerReleaseFeed(app, ctx);
  registerSnippetRoute(app, ctx);
  registerX402DiscoveryRoute(app, ctx);
};

/**
 * The creator's own view of what public serves about their listings (the manifest of a draft
 * too), under the `creator` rate limit and a key; registered beside the listing routes.
 */
export const creatorDocumentRoutes: FastifyPluginAsyncZod<{ ctx: AppContext }> = async (app, { ctx }) => {
  registerCreatorManifestRoute(app, ctx);
};
