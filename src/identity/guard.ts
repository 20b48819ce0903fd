import type { FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { AppContext } from '../context.js';
import { AppError } from '../platform/errors.js';
import { type AuthenticatedCreator, assertScope, authenticateApiKey } from './api-keys.js';
import type { Scope } from './scopes.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by `requireApiKey` on creator routes. Read it with `creatorOf(request)`. */
    creator?: AuthenticatedCreator;
  }
}

/**
 * The preHandler of every creator route: authenticates `Authorization: Bearer <API_KEY>`
 * (`401 invalid_key`), checks `scope` when given (`403 insufficient_scope`), and puts the creator
 * on the request. Add `security: [{ apiKey: [] }]` and the two codes to the route's schema.
 */
export function requireApiKey(ctx: AppContext, scope?: Scope): preHandlerAsyncHookHandler {
  return async (request) => {
    const creator = await authenticateApiKey(ctx, request.headers.authorization);
    if (scope) assertScope(creator, scope);
    request.creator = creator;
  };
}

/** The authenticated creator of a route guarded by `requireApiKey`. */
export function creatorOf(request: FastifyRequest): AuthenticatedCreator {
  if (!request.creator) {
    throw new AppError('internal', { message: 'Route is missing its requireApiKey guard' });
  }
  return request.creator;
}
