import { z } from 'zod';
import { KEYS_PATH } from '../attestations/urls.js';
import type { App, AppContext } from '../context.js';
import {
  API_CATALOG_LINK,
  API_CATALOG_PATH,
  SKILL_PATH,
  X402_DISCOVERY_PATH,
} from '../platform/http/discovery-links.js';
import { prebuilt, sendPrebuilt } from '../platform/http/prebuilt.js';
import { errorResponses } from '../platform/http/schemas.js';

const LINKSET_TYPE = 'application/linkset+json; profile="https://www.rfc-editor.org/info/rfc9727"';

const Link = z.object({ href: z.string(), type: z.string() });
const Links = z.array(Link);
const LinksetSchema = z
  .object({
    linkset: z.array(
      z.object({
        anchor: z.string(),
        'service-desc': Links,
        'service-doc': Links,
        'service-meta': Links,
        describedby: Links,
        'terms-of-service': Links,
        status: Links,
      }),
    ),
  })
  .meta({ id: 'ApiCatalog' });

/**
 * RFC 9727 API catalog: the HTTP API and the MCP server, each with its description, docs (the
 * buying skill and guide among them), terms, attestation keys, the x402 resources on sale and status.
 */
export function apiCatalog(baseUrl: string): z.infer<typeof LinksetSchema> {
  const links = {
    'service-desc': [{ href: `${baseUrl}/api/openapi.json`, type: 'application/openapi+json' }],
    'service-doc': [
      { href: `${baseUrl}${SKILL_PATH}`, type: 'text/markdown' },
      { href: `${baseUrl}/docs/buying.md`, type: 'text/markdown' },
      { href: `${baseUrl}/docs`, type: 'text/html' },
    ],
    'service-meta': [
      { href: `${baseUrl}/api/terms`, type: 'application/json' },
      // The public keys that verify release attestations (docs/ATTESTATIONS.md).
      { href: `${baseUrl}${KEYS_PATH}`, type: 'application/json' },
    ],
    // Every resource on sale, with its price (x402 discovery).
    describedby: [{ href: `${baseUrl}${X402_DISCOVERY_PATH}`, type: 'application/json' }],
    'terms-of-service': [{ href: `${baseUrl}/api/terms`, type: 'application/json' }],
    status: [{ href: `${baseUrl}/api/health`, type: 'application/json' }],
  };
  return {
    linkset: [
      { anchor: `${baseUrl}/api`, ...links },
      { anchor: `${baseUrl}/api/mcp`, ...links },
    ],
  };
}

export function registerCatalogRoute(app: App, ctx: AppContext): void {
  const catalog = prebuilt(LinksetSchema.parse(apiCatalog(ctx.config.baseUrl)), LINKSET_TYPE);
  app.get(
    API_CATALOG_PATH,
    {
      schema: {
        tags: ['public'],
        summary:
          'RFC 9727 API catalog naming the API description, docs, the buying skill, the x402 resources, terms and status',
        response: {
          200: { description: 'Linkset', content: { 'application/linkset+json': { schema: LinksetSchema } } },
          ...errorResponses(),
        },
      },
    },
    async (request, reply) =>
      sendPrebuilt(request, reply.header('link', API_CATALOG_LINK), catalog, 'public, max-age=300'),
  );
}
