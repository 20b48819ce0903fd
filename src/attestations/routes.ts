import type { App, AppContext } from '../context.js';
import { cacheSlot } from '../platform/cache/caches.js';
import { ReadCache } from '../platform/cache/read-cache.js';
import { prebuilt, sendPrebuilt } from '../platform/http/prebuilt.js';
import { errorResponses } from '../platform/http/schemas.js';
import { rateLimitConfig } from '../platform/limits/rate-limit.js';
import { AttestationKeysSchema } from './schemas.js';
import { keysDocument } from './service.js';
import { KEYS_PATH } from './urls.js';

/** Keys change at a rotation or a re-signing only; a process serves its copy for a few seconds at most after one. */
const keysDocuments = cacheSlot(() => new ReadCache<ReturnType<typeof prebuilt>>({ max: 1, ttlMs: 5_000 }));

/** `GET /.well-known/repo402-keys.json`: the public keys that verify release attestations. */
export function registerAttestationKeysRoute(app: App, ctx: AppContext): void {
  app.get(
    KEYS_PATH,
    {
      config: rateLimitConfig(ctx.config, 'public'),
      schema: {
        tags: ['public'],
        summary: 'The Ed25519 public keys that sign release attestations, with key ids and validity windows',
        response: { 200: AttestationKeysSchema, ...errorResponses('rate_limited') },
      },
    },
    async (request, reply) => {
      const doc = await ctx.caches
        .get(keysDocuments)
        .get('keys', async () => prebuilt(await keysDocument(ctx.database.db)));
      return sendPrebuilt(request, reply, doc, 'public, max-age=60');
    },
  );
}
