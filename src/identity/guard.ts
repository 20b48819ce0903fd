import type { FastifyInstance, FastifyRequest, onRequestAsyncHookHandler, onRouteHookHandler } from 'fastify';
import type { AppContext } from '../context.js';
import { AppError } from '../platform/errors.js';
import { HOOK_STAGES, type Hook, hooksOf, setHooks } from '../platform/http/route-hooks.js';
import { type AuthenticatedCreator, assertScope, authenticateApiKey } from './api-keys.js';
import type { Scope } from './scopes.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by `requireApiKey` on creator routes. Read it with `creatorOf(request)`. */
    creator?: AuthenticatedCreator;
  }
}

/** Every guard `requireApiKey` made, with the scope it checks. */
const guardScopes = new WeakMap<object, Scope | undefined>();

/**
 * The guard of every key route: authenticates `Authorization: Bearer <API_KEY>` (`401
 * invalid_key`), checks `scope` when given (`403 insufficient_scope`), and puts the creator on the
 * request. Whatever hook a route lists it under, `authenticateKeyRoutesFirst` runs it in
 * `onRequest`, and writes the route's OpenAPI `security`; list `invalid_key` (and
 * `insufficient_scope`) in the route's error responses.
 */
export function requireApiKey(ctx: AppContext, scope?: Scope): onRequestAsyncHookHandler {
  const guard: onRequestAsyncHookHandler = async (request) => {
    const creator = await authenticateApiKey(ctx, request.headers.authorization);
    if (scope) assertScope(creator, scope);
    request.creator = creator;
  };
  guardScopes.set(guard, scope);
  return guard;
}

/** The authenticated creator of a route guarded by `requireApiKey`. */
export function creatorOf(request: FastifyRequest): AuthenticatedCreator {
  if (!request.creator) {
    throw new AppError('internal', { message: 'Route is missing its requireApiKey guard' });
  }
  return request.creator;
}

/**
 * Authentication before anything else: on every key route the guard runs at the end of
 * `onRequest` (after the rate limit, before the body is read or validated), so a caller without
 * a valid key, or without the route's scope, learns nothing of the route's rules: not its body
 * schema, not whether an id exists. The route's OpenAPI `security` is written from its guard
 * (`apiKey: [<scope>]`), and a route that declares the key scheme without a guard, or has two
 * guards, stops the server at start-up. Install after the rate limits and before any route.
 */
export function authenticateKeyRoutesFirst(app: FastifyInstance): void {
  const onRoute: onRouteHookHandler = (route) => {
    const guards: Hook[] = [];
    for (const stage of HOOK_STAGES) {
      const hooks = hooksOf(route, stage);
      const found = hooks.filter((hook) => guardScopes.has(hook));
      if (found.length === 0) continue;
      guards.push(...found);
      setHooks(
        route,
        stage,
        hooks.filter((hook) => !guardScopes.has(hook)),
      );
    }
    const declared = route.schema?.security?.some((requirement) => 'apiKey' in requirement) ?? false;
    const name = `${route.method} ${route.url}`;
    if (guards.length === 0) {
      if (declared)
        throw new Error(`${name} declares the apiKey security scheme but has no requireApiKey guard`);
      return;
    }
    if (guards.length > 1) throw new Error(`${name} has more than one requireApiKey guard`);
    // Without a limit, guessing keys on this route would cost the guesser nothing.
    if (!route.config?.limit) throw new Error(`${name} has a requireApiKey guard but no rate limit`);
    const guard = guards[0]!;
    setHooks(route, 'onRequest', [...hooksOf(route, 'onRequest'), guard]);
    const scope = guardScopes.get(guard);
    route.schema = { ...route.schema, security: [{ apiKey: scope ? [scope] : [] }] };
  };
  app.addHook('onRoute', onRoute);
}
