import { sql } from 'drizzle-orm';
import { expect } from 'vitest';
import { selectRows } from '../../src/db/connect.js';
import { ERRORS, type ErrorCode } from '../../src/platform/errors.js';
import type { TestApp } from './app.js';

/** One parameter of an operation, as the OpenAPI document states it. */
export interface OpenApiParameter {
  in: 'path' | 'query' | 'header';
  name: string;
  required?: boolean;
  schema?: JsonSchema;
}

export type JsonSchema = Record<string, unknown> & {
  $ref?: string;
  properties?: Record<string, JsonSchema>;
  anyOf?: JsonSchema[];
};

/** One operation of the served OpenAPI document: what the security tests iterate over. */
export interface OpenApiRoute {
  /** `METHOD /path`, the key the tests' own tables use. */
  name: string;
  method: string;
  path: string;
  tags: string[];
  security: Record<string, string[]>[];
  parameters: OpenApiParameter[];
  /** The request body schema with its `$ref` resolved, when the operation takes one. */
  body?: JsonSchema;
  /** The statuses the operation documents. */
  statuses: number[];
}

interface Operation {
  tags?: string[];
  security?: Record<string, string[]>[];
  parameters?: OpenApiParameter[];
  requestBody?: { content: Record<string, { schema: JsonSchema }> };
  responses?: Record<string, unknown>;
}

/** Every operation of the app's `/api/openapi.json`, in document order. */
export async function openApiRoutes(t: TestApp): Promise<OpenApiRoute[]> {
  const res = await t.app.inject({ url: '/api/openapi.json' });
  expect(res.statusCode).toBe(200);
  const doc = res.json() as {
    paths: Record<string, Record<string, Operation>>;
    components?: { schemas?: Record<string, JsonSchema> };
  };
  const resolve = (schema: JsonSchema): JsonSchema => {
    if (schema.$ref) return resolve(doc.components!.schemas![schema.$ref.split('/').pop()!]!);
    // An optional body (`anyOf: [Body, null]`): the object is the interesting part.
    const object = schema.anyOf?.find((option) => option.$ref || option.properties);
    return object ? resolve(object) : schema;
  };
  return Object.entries(doc.paths).flatMap(([path, operations]) =>
    Object.entries(operations).map(([method, operation]): OpenApiRoute => {
      const json = operation.requestBody?.content['application/json']?.schema;
      return {
        name: `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        path,
        tags: operation.tags ?? [],
        security: operation.security ?? [],
        parameters: operation.parameters ?? [],
        body: json ? resolve(json) : undefined,
        statuses: Object.keys(operation.responses ?? {}).map(Number),
      };
    }),
  );
}

/** True when the operation accepts `scheme` (as its only or as one of its alternatives). */
export function acceptsScheme(route: OpenApiRoute, scheme: string): boolean {
  return route.security.some((requirement) => scheme in requirement);
}

/** `path` with each `{name}` replaced by the (URL-encoded) value given for it. */
export function fillPath(path: string, values: Record<string, string>): string {
  return path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`no value for {${name}} in ${path}`);
    return encodeURIComponent(value);
  });
}

/**
 * The spec's error body (SPEC.md, Errors): `{code, message, docs_url, details?}` with a code from
 * the table and the status the table gives that code. Returns the parsed body.
 */
export function expectSpecError(
  res: { statusCode: number; headers: Record<string, unknown>; body: string },
  baseUrl: string,
  context: string,
): { code: ErrorCode; message: string; details?: { issues?: unknown[] } } {
  expect(String(res.headers['content-type']), `${context}: ${res.body}`).toMatch(/^application\/json/);
  const body = JSON.parse(res.body);
  expect(Object.keys(ERRORS), `${context}: ${res.body}`).toContain(body.code);
  const code = body.code as ErrorCode;
  expect(
    { status: res.statusCode, message: typeof body.message, docs_url: body.docs_url },
    `${context}: ${res.body}`,
  ).toEqual({ status: ERRORS[code].status, message: 'string', docs_url: `${baseUrl}/docs/errors#${code}` });
  if (code === 'invalid_request')
    expect(body.details?.issues?.length, `${context}: ${res.body}`).toBeGreaterThan(0);
  if (code === 'rate_limited') expect(body.retry_after_seconds, `${context}: ${res.body}`).toBeGreaterThan(0);
  return body;
}

/**
 * Every row of every table the app owns (schema `public`) but those named in `without`, each table
 * sorted, as one JSON string: equal snapshots before and after a request mean it changed nothing.
 */
export async function databaseSnapshot(
  t: TestApp,
  { without = [] }: { without?: string[] } = {},
): Promise<string> {
  const db = t.ctx.database.db;
  const tables = await selectRows<{ name: string }>(
    db,
    sql`select table_name as name from information_schema.tables
        where table_schema = 'public' and table_type = 'BASE TABLE' order by table_name`,
  );
  const names = tables.map((table) => table.name).filter((name) => !without.includes(name));
  // Every table's rows in one statement rather than one query each: the authorization matrix takes
  // two snapshots per route and caller list, some forty tables each. PostgreSQL renders each row
  // (`to_jsonb`, every column at full precision), so equal text is an equal row.
  const rows = await selectRows<{ name: string; row: string }>(
    db,
    sql.join(
      names.map(
        (name) => sql`select ${name}::text as name, to_jsonb(t)::text as row from ${sql.identifier(name)} t`,
      ),
      sql` union all `,
    ),
  );
  const snapshot: Record<string, string[]> = Object.fromEntries(names.map((name) => [name, [] as string[]]));
  for (const { name, row } of rows) snapshot[name]!.push(row);
  for (const name of names) snapshot[name]!.sort();
  return JSON.stringify(snapshot);
}
