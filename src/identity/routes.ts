import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppContext } from '../context.js';
import { assertChallengeDomain } from './challenges.js';
import { drainOutbox } from './outbox.js';
import { registerAuthRoutes } from './routes/auth.js';
import { registerCreatorRoutes } from './routes/creators.js';

/**
 * Identity's HTTP plugin, registered under `/api`: challenges, key rotation and web sessions
 * (`routes/auth.ts`, the `auth` rate limit), registration and the creator's own account
 * (`routes/creators.ts`).
 */
export const identityRoutes: FastifyPluginAsyncZod<{ ctx: AppContext }> = async (app, { ctx }) => {
  assertChallengeDomain(ctx.config.baseUrl);
  registerAuthRoutes(app, ctx);
  registerCreatorRoutes(app, ctx);
  // Messages being delivered write their outcome; let them finish before the database closes.
  app.addHook('onClose', async () => {
    await drainOutbox(ctx);
  });
};
