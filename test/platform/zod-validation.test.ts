import Fastify from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { validAsParsed, validatorCompiler } from '../../src/platform/http/zod-validation.js';

async function appWithHeaders(headers: z.ZodType) {
  const app = Fastify().withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.get(
    '/',
    { schema: { headers, querystring: z.object({ n: z.coerce.number().optional() }) } },
    (request) => ({
      rawKept: request.headers === request.raw.headers,
      tag: request.headers['x-tag'] ?? null,
      n: (request.query as { n?: number }).n ?? null,
    }),
  );
  await app.ready();
  return app;
}

describe('the zod validator compiler', () => {
  it('leaves headers a schema only checked as Node parsed them', async () => {
    const app = await appWithHeaders(z.looseObject({ 'x-tag': z.string().max(5).optional() }));
    const res = await app.inject({ url: '/?n=3', headers: { 'x-tag': 'abc', 'x-other': '1' } });
    expect(res.json()).toEqual({ rawKept: true, tag: 'abc', n: 3 });
    await app.close();
  });

  it('still refuses headers that fail the schema', async () => {
    const app = await appWithHeaders(z.looseObject({ 'x-tag': z.string().max(5).optional() }));
    const res = await app.inject({ url: '/', headers: { 'x-tag': 'far too long' } });
    expect(res.statusCode).toBe(400);
    await app.close();
  });

  it('takes a request carrying none of the named headers as it is, and still refuses what the schema would', async () => {
    const loose = await appWithHeaders(z.looseObject({ 'x-tag': z.string().max(5).optional() }));
    const res = await loose.inject({ url: '/?n=4', headers: { 'x-other': 'anything at all' } });
    expect(res.json()).toEqual({ rawKept: true, tag: null, n: 4 });
    await loose.close();
    // A strict object refuses headers it does not name; a check on the whole object sees them all.
    const strict = await appWithHeaders(z.strictObject({ 'x-tag': z.string().optional() }));
    expect((await strict.inject({ url: '/', headers: { 'x-other': '1' } })).statusCode).toBe(400);
    await strict.close();
    const checked = await appWithHeaders(
      z
        .looseObject({ 'x-tag': z.string().optional() })
        .refine((headers) => headers['x-other'] !== 'no', { message: 'x-other must not be no' }),
    );
    expect((await checked.inject({ url: '/', headers: { 'x-other': 'no' } })).statusCode).toBe(400);
    expect((await checked.inject({ url: '/', headers: { 'x-other': 'yes' } })).statusCode).toBe(200);
    await checked.close();
  });

  it('keeps what a schema changed (a transform or a default)', async () => {
    const app = await appWithHeaders(
      z.looseObject({
        'x-tag': z
          .string()
          .default('none')
          .transform((tag) => tag.toUpperCase()),
      }),
    );
    expect((await app.inject({ url: '/', headers: { 'x-tag': 'abc' } })).json()).toMatchObject({
      rawKept: false,
      tag: 'ABC',
    });
    expect((await app.inject({ url: '/' })).json()).toMatchObject({ rawKept: false, tag: 'NONE' });
    await app.close();
  });

  it('skips only the params and query schemas that accept whatever Fastify parsed, unchanged', () => {
    const plain = z.object({ owner: z.string(), slug: z.string().meta({ description: 'x' }) });
    expect(validAsParsed('params', plain, '/api/v/:owner/:slug')).toBe(true);
    // A check, a format, a transform, an optional or a default could refuse or change a value.
    for (const field of [
      z.string().min(3),
      z.uuid(),
      z.email(),
      z.string().trim(),
      z.string().optional(),
      z.string().default('a'),
    ]) {
      expect(validAsParsed('params', z.object({ owner: field, slug: z.string() }), '/:owner/:slug')).toBe(
        false,
      );
    }
    // The schema must name exactly the route's parameters: one it lacks would be refused, one it
    // does not name would be stripped.
    expect(validAsParsed('params', plain, '/api/v/:owner')).toBe(false);
    expect(validAsParsed('params', plain, '/api/v/:owner/:slug/:version')).toBe(false);
    expect(validAsParsed('params', plain, '/api/v/:owner/*')).toBe(false);
    expect(
      validAsParsed(
        'params',
        plain.refine(() => true),
        '/:owner/:slug',
      ),
    ).toBe(false);
    expect(validAsParsed('querystring', z.looseObject({}), '/')).toBe(true);
    expect(validAsParsed('querystring', z.object({}), '/')).toBe(false);
    expect(validAsParsed('querystring', z.looseObject({ n: z.string().optional() }), '/')).toBe(false);
    expect(validAsParsed('body', z.looseObject({}), '/')).toBe(false);
  });

  it('still refuses params and query strings a schema with checks refuses', async () => {
    const app = Fastify().withTypeProvider<ZodTypeProvider>();
    app.setValidatorCompiler(validatorCompiler);
    app.get(
      '/p/:owner/:slug',
      {
        schema: {
          params: z.object({ owner: z.string().min(3), slug: z.string() }),
          querystring: z.object({ n: z.coerce.number().int() }),
        },
      },
      (request) => ({ params: request.params, query: request.query }),
    );
    app.get(
      '/q/:owner/:slug',
      {
        schema: { params: z.object({ owner: z.string(), slug: z.string() }), querystring: z.looseObject({}) },
      },
      (request) => ({ params: request.params, query: request.query }),
    );
    await app.ready();
    expect((await app.inject({ url: '/p/ab/c?n=1' })).statusCode).toBe(400);
    expect((await app.inject({ url: '/p/abc/c?n=x' })).statusCode).toBe(400);
    expect((await app.inject({ url: '/p/abc/c?n=2' })).json()).toEqual({
      params: { owner: 'abc', slug: 'c' },
      query: { n: 2 },
    });
    expect((await app.inject({ url: '/q/a/b?x=1&x=2&y=' })).json()).toEqual({
      params: { owner: 'a', slug: 'b' },
      query: { x: ['1', '2'], y: '' },
    });
    await app.close();
  });
});
