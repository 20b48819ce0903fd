import { z } from 'zod';
import type { App, AppContext } from '../context.js';
import { listLiveListings } from '../listings/catalog.js';
import { listingCacheSlot } from '../platform/cache/caches.js';
import { SKILL_PATH, X402_DISCOVERY_PATH } from '../platform/http/discovery-links.js';
import { type Prebuilt, prebuilt, sendPrebuilt } from '../platform/http/prebuilt.js';
import { errorResponses } from '../platform/http/schemas.js';
import { rateLimitConfig } from '../platform/limits/rate-limit.js';
import { formatMicroUsdc } from '../platform/money/money.js';
import { offerFor, pricedListing } from '../purchases/pricing.js';
import { acceptedOffer, bazaarFor } from '../x402/payment-required.js';

/**
 * `/.well-known/x402`: every resource on sale. No format is ratified, so one document serves the
 * readers in use: x402scan's `{version, resources: ["GET <url>"], instructions}`, the proposal's
 * `x402Version`, and Bazaar-style `items` carrying each resource's payment requirements.
 */

/** The most resources one document lists; far above one deployment's catalogue today. */
const MAX_RESOURCES = 5000;

const DiscoverySchema = z
  .object({
    x402Version: z.literal(2),
    version: z.literal(1),
    resources: z.array(z.string()).meta({ description: '"GET <url>" for every resource on sale' }),
    items: z.array(
      z.looseObject({
        resource: z.string(),
        type: z.literal('http'),
        x402Version: z.literal(2),
        accepts: z.array(z.looseObject({})),
        lastUpdated: z.iso.datetime(),
        description: z.string(),
        mimeType: z.string(),
      }),
    ),
    instructions: z.string(),
  })
  .meta({ id: 'X402Discovery' });

/** The app's one document (its base URL and catalogue), dropped whole when any listing changes. */
const discoveryCache = listingCacheSlot<Prebuilt>({ max: 1, ttlMs: 1000, keyedByListing: false });

function discoveryDocument(ctx: AppContext): Promise<Prebuilt> {
  return ctx.caches.get(discoveryCache).get('doc', () => buildDiscoveryDocument(ctx));
}

async function buildDiscoveryDocument(ctx: AppContext): Promise<Prebuilt> {
  const { baseUrl } = ctx.config;
  const rail = await ctx.rail();
  const live = await listLiveListings(ctx.database.db, MAX_RESOURCES);
  const items = live
    .flatMap((listing) => {
      const priced = pricedListing(listing);
      return priced ? [priced] : [];
    })
    .sort((a, b) => `${a.owner}/${a.slug}`.localeCompare(`${b.owner}/${b.slug}`))
    .map((listing) => {
      const offer = offerFor(listing, listing.version);
      const accepted = acceptedOffer(baseUrl, rail, offer);
      return {
        resource: accepted.resource,
        type: 'http' as const,
        x402Version: 2 as const,
        accepts: [accepted],
        lastUpdated: listing.publishedAt.toISOString(),
        description: listing.description || accepted.description,
        mimeType: 'application/zip',
        extensions: { bazaar: bazaarFor(offer) },
        metadata: {
          channel: `${listing.owner}/${listing.slug}`,
          version: listing.version,
          manifest_url: `${baseUrl}/api/label/${listing.owner}/${listing.slug}`,
          update_price_micro: formatMicroUsdc(listing.updatePriceMicro),
        },
      };
    });
  const doc = prebuilt({
    x402Version: 2,
    version: 1,
    resources: items.map((item) => `GET ${item.resource}`),
    items,
    instructions:
      `repo402 sells private git repositories as zip artifacts, one resource per listing, paid in USDC on ${rail.network.name} (${rail.network.caip2}; x402 v2, exact). ` +
      `GET a resource for its 402, sign accepts[0] and repeat the GET with PAYMENT-SIGNATURE and X-Quote-Id (the 402 body's top-level extra.quote_id; the official client echoes it in the payment itself). ` +
      `Read the free manifest first (metadata.manifest_url). Skill: ${baseUrl}${SKILL_PATH}. MCP: ${baseUrl}/api/mcp.`,
  });
  return doc;
}

export function registerX402DiscoveryRoute(app: App, ctx: AppContext): void {
  app.get(
    X402_DISCOVERY_PATH,
    {
      schema: {
        tags: ['public'],
        summary: 'Every resource on sale, for x402 discovery (x402scan, Bazaar-style items)',
        response: { 200: DiscoverySchema, ...errorResponses('rate_limited') },
      },
      config: rateLimitConfig(ctx.config, 'public'),
    },
    async (request, reply) =>
      sendPrebuilt(request, reply, await discoveryDocument(ctx), 'public, max-age=60'),
  );
}
