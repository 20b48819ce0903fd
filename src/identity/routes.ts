import type { App, AppContext } from '../context.js';
import { registerAuthRoutes } from './auth-routes.js';
import { assertChallengeDomain } from './challenges.js';
import { registerCreatorRoutes } from './creator-routes.js';
import { drainOutbox } from './outbox.js';

/** Challenges, key rotation, web sessions, registration and the creator's own account. */
export function registerIdentityRoutes(app: App, ctx: AppContext): void {
  assertChallengeDomain(ctx.config.baseUrl);
  registerAuthRoutes(app, ctx);
  registerCreatorRoutes(app, ctx);
  // Messages being delivered write their outcome; let them finish before the database closes.
  app.addHook('onClose', async () => {
    await drainOutbox(ctx);
  });
}
