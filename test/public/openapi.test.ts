import { validate } from '@readme/openapi-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, TEST_BASE_URL, type TestApp } from '../support/app.js';

type Operation = {
  responses: Record<string, { description?: string; content?: Record<string, { schema: unknown }> }>;
};

describe('GET /api/openapi.json', () => {
  let t: TestApp;
  let doc: {
    openapi: string;
    info: { version: string };
    servers: { url: string }[];
    paths: Record<string, Record<string, Operation>>;
    components: { schemas: Record<string, unknown> };
  };
  beforeAll(async () => {
    t = await createTestApp();
    const res = await t.app.inject({ method: 'GET', url: '/api/openapi.json' });
    expect(res.statusCode).toBe(200);
    doc = res.json();
  });
  afterAll(async () => t.close());

  it('is a valid OpenAPI 3.1 document, version 0.0.1', async () => {
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(doc.info.version).toBe('0.0.1');
    expect(doc.servers).toEqual([{ url: TEST_BASE_URL }]);
    const result = await validate(structuredClone(doc) as never);
    expect(result.valid ? [] : result.errors).toEqual([]);
  });

  it('has the Error schema in components', () => {
    expect(doc.components.schemas.Error).toMatchObject({
      type: 'object',
      required: expect.arrayContaining(['code', 'message', 'docs_url']),
    });
  });

  it('lists the implemented routes with their responses', () => {
    for (const path of ['/api/health', '/api/terms', '/api/openapi.json', '/.well-known/api-catalog']) {
      expect(doc.paths[path]?.get, path).toBeDefined();
      expect(Object.keys(doc.paths[path]!.get!.responses)).toContain('200');
    }
  });

  it('documents every error response with the Error schema', () => {
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        for (const [status, response] of Object.entries(operation.responses)) {
          if (Number(status) < 400) continue;
          const schema = response.content?.['application/json']?.schema as { anyOf?: unknown[] } | undefined;
          const error = { $ref: '#/components/schemas/Error' };
          // A buy route's 402 is the payment-required body or one of the 402 error codes.
          if (status === '402' && schema?.anyOf) {
            expect(schema.anyOf, `${method} ${path} ${status}`).toEqual([
              { $ref: '#/components/schemas/PaymentRequired' },
              error,
            ]);
          } else {
            expect(schema, `${method} ${path} ${status}`).toEqual(error);
          }
        }
      }
    }
  });
});
