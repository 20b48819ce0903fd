import Fastify from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { AppContext } from '../../src/context.js';
import { issueApiKey } from '../../src/identity/api-keys.js';
import { authenticateKeyRoutesFirst, creatorOf, requireApiKey } from '../../src/identity/guard.js';
import { CURRENT_SCOPES } from '../../src/identity/scopes.js';
import { errorResponses } from '../../src/platform/http/schemas.js';
import { rateLimitConfig } from '../../src/platform/limits/rate-limit.js';
import { bearer, type RegisteredCreator, registerCreator } from '../identity/support.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { BACKENDS } from '../support/db.js';

/**
 * Issue 13, item 8: on every route that needs an API key, a caller without one (or without the
 * route's scope) is refused before anything about its input is checked, so the refusal never
 * carries `details.issues` and never depends on the body, the query or the path parameters.
 */

interface KeyRoute {
  method: string;
  path: string;
  scope: string | undefined;
  /** Declares a body, query or path parameters: the invalid input below is invalid for it. */
  takesInput: boolean;
}

type Operation = {
  security?: Record<string, string[]>[];
  requestBody?: unknown;
  parameters?: { in: string }[];
};

/** Every operation of the OpenAPI document that names the apiKey scheme, with its scope. */
async function keyRoutes(t: TestApp): Promise<KeyRoute[]> {
  const doc = (await t.app.inject({ url: '/api/openapi.json' })).json() as {
    paths: Record<string, Record<string, Operation>>;
  };
  return Object.entries(doc.paths).flatMap(([path, operations]) =>
    Object.entries(operations).flatMap(([method, operation]) => {
      const requirement = operation.security?.find((entry) => 'apiKey' in entry);
      if (!requirement) return [];
      return [
        {
          method: method.toUpperCase(),
          path,
          scope: requirement.apiKey![0],
          takesInput:
            operation.requestBody !== undefined ||
            (operation.parameters ?? []).some((parameter) => parameter.in !== 'header'),
        },
      ];
    }),
  );
}

/** The same invalid input for every route: a path id that is no uuid, an unknown query field, a body no schema takes. */
function invalidRequest(route: KeyRoute, headers: Record<string, string>) {
  const hasBody = !['GET', 'DELETE'].includes(route.method);
  return {
    method: route.method as 'GET',
    url: `${route.path.replace(/\{[^}]+\}/g, 'not-a-uuid')}?limit=0&unknown=1`,
    headers,
    ...(hasBody ? { payload: { unknown: 'x\u0000', source: 42, slug: '-', spdx: 'GPL-3.0' } } : {}),
  };
}

const EXPECTED_KEY_ROUTES = [
  'DELETE /api/auth/sessions/current',
  'POST /api/creators/me/webhooks',
  'GET /api/creators/me/webhooks',
  'DELETE /api/creators/me/webhooks/{id}',
  'GET /api/creators/me/webhooks/{id}/deliveries',
  'GET /api/creators/me',
  'PATCH /api/creators/me',
  'POST /api/listings',
  'GET /api/listings',
  'GET /api/listings/{id}',
  'PATCH /api/listings/{id}',
  'DELETE /api/listings/{id}',
  'PUT /api/listings/{id}/ssh-key',
  'POST /api/listings/{id}/publish',
  'POST /api/listings/{id}/licence',
  'POST /api/listings/{id}/sync',
  'GET /api/creators/me/sales',
  'GET /api/creators/me/sales/daily',
  'GET /api/creators/me/ledger',
  'GET /api/creators/me/payouts',
  'GET /api/listings/{id}/releases',
  'GET /api/listings/{id}/manifest',
  'GET /api/github/repositories',
];

describe.each(BACKENDS)('authentication before validation on %s', (backend) => {
  let t: TestApp;
  let creator: RegisteredCreator;
  let routes: KeyRoute[];
  beforeAll(async () => {
    t = await createTestApp({ backend });
    creator = await registerCreator(t);
    routes = await keyRoutes(t);
  });
  afterAll(async () => t.close());

  const expectRefusal = (res: { statusCode: number; body: string }, status: number, code: string) => {
    const body = JSON.parse(res.body);
    expect({ status: res.statusCode, code: body.code, details: body.details }, res.body).toEqual({
      status,
      code,
      details: undefined,
    });
  };

  it('finds every key route in the OpenAPI document, each with the scope its guard checks', () => {
    const names = routes.map((route) => `${route.method} ${route.path}`);
    expect(names).toEqual(expect.arrayContaining(EXPECTED_KEY_ROUTES));
    for (const route of routes) {
      if (route.scope !== undefined) expect(CURRENT_SCOPES).toContain(route.scope);
    }
    expect(routes.find((route) => route.path === '/api/listings/{id}/sync')?.scope).toBe('releases:write');
    expect(routes.find((route) => route.method === 'POST' && route.path === '/api/listings')?.scope).toBe(
      'listings:write',
    );
    expect(routes.find((route) => route.path === '/api/creators/me/sales')?.scope).toBe('sales:read');
  });

  it('answers 401 invalid_key without issues to a caller with no key, a malformed key or an unknown key', async () => {
    for (const route of routes) {
      for (const headers of [{}, { authorization: 'Bearer not-a-key' }, bearer(`r402_${'A'.repeat(43)}`)]) {
        const res = await t.app.inject(invalidRequest(route, headers));
        expect.soft(res.statusCode, `${route.method} ${route.path}: ${res.body}`).toBe(401);
        expectRefusal(res, 401, 'invalid_key');
      }
    }
  });

  it('answers 403 insufficient_scope without issues to a key that lacks the route’s scope', async () => {
    const scoped = routes.filter((route) => route.scope !== undefined);
    expect(scoped.length).toBeGreaterThan(0);
    for (const route of scoped) {
      const narrow = await issueApiKey(t.ctx.database.db, {
        creatorId: creator.id,
        kind: 'agent',
        at: t.clock.now(),
        scopes: CURRENT_SCOPES.filter((scope) => scope !== route.scope),
      });
      expectRefusal(
        await t.app.inject(invalidRequest(route, bearer(narrow.apiKey))),
        403,
        'insufficient_scope',
      );
    }
  });

  it('validates the same input once the key is good (the input above is really invalid)', async () => {
    for (const route of routes.filter((candidate) => candidate.takesInput)) {
      const res = await t.app.inject(invalidRequest(route, bearer(creator.apiKey)));
      expect(res.statusCode, `${route.method} ${route.path}: ${res.body}`).toBe(400);
      expect(res.json().details.issues.length).toBeGreaterThan(0);
    }
  });
});

describe('the key guard as other domains use it', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  const BodySchema = z.strictObject({ name: z.string().min(3) });

  it('runs before validation even when a route lists it as a preHandler, and documents its scope', async () => {
    t = await createTestApp({
      extend: (app, ctx) => {
        app.post(
          '/test/guarded',
          {
            config: rateLimitConfig(ctx.config, 'creator'),
            preHandler: requireApiKey(ctx, 'releases:write'),
            schema: {
              body: BodySchema,
              response: {
                200: z.object({ handle: z.string() }),
                ...errorResponses('invalid_request', 'invalid_key', 'insufficient_scope'),
              },
            },
          },
          async (request) => ({ handle: creatorOf(request).handle }),
        );
      },
    });
    const creator = await registerCreator(t);
    const post = (payload: object, headers: Record<string, string> = {}) =>
      t!.app.inject({ method: 'POST', url: '/test/guarded', payload, headers });

    const anonymous = await post({ name: 'x' });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json().details).toBeUndefined();
    expect((await post({ name: 'x' }, bearer(creator.apiKey))).statusCode).toBe(400);
    expect((await post({ name: 'xyz' }, bearer(creator.apiKey))).json()).toEqual({ handle: creator.handle });
    expect(t.app.swagger().paths?.['/test/guarded']?.post?.security).toEqual([
      { apiKey: ['releases:write'] },
    ]);
  });

  it('refuses at start-up a route that declares the key but has no guard', () => {
    const app = Fastify();
    authenticateKeyRoutesFirst(app);
    expect(() =>
      app.get('/test/unguarded', { schema: { security: [{ apiKey: [] }] } }, async () => ({})),
    ).toThrow('GET /test/unguarded declares the apiKey security scheme but has no requireApiKey guard');
  });

  it('refuses at start-up a guarded route without a rate limit: guessing keys there would be free', async () => {
    const app = Fastify();
    authenticateKeyRoutesFirst(app);
    expect(() =>
      app.get(
        '/test/unlimited',
        { onRequest: requireApiKey({} as AppContext, 'listings:read') },
        async () => ({}),
      ),
    ).toThrow('GET /test/unlimited has a requireApiKey guard but no rate limit');
  });

  it('counts callers without a key against the rate limit before looking at keys', async () => {
    t = await createTestApp({ env: { RATE_LIMIT_CREATOR: '2/60' } });
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await t.app.inject({ url: '/api/listings' })).statusCode);
    expect(statuses).toEqual([401, 401, 429]);
  });
});
