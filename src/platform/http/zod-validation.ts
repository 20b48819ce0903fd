import type { FastifySchemaCompiler } from 'fastify';
import { validatorCompiler as zodValidatorCompiler } from 'fastify-type-provider-zod';
import type { $ZodType } from 'zod/v4/core';
import { safeParse } from 'zod/v4/core';

/**
 * fastify-type-provider-zod's validator, except that headers a schema only checked are left as
 * Node parsed them. Fastify keeps a validated headers object beside the raw one and merges the two
 * into a fresh copy on every `request.headers` read: several copies per request on the buy path,
 * a sixth of its handler's CPU (docs/DECISIONS.md, D-13). When the schema changed a value (a default, a
 * transform), the validated object is kept as before.
 *
 * Path parameters and query strings whose schema accepts whatever Fastify parsed, unchanged, are not
 * parsed per request (`validAsParsed`): returning `true` tells Fastify the part is valid as it is.
 */
export const validatorCompiler: FastifySchemaCompiler<$ZodType> = (route) => {
  // A parse that can neither refuse nor change what Fastify parsed is not run at all (version
  // status spent about 2 µs of its 45-50 per request on it, docs/DECISIONS.md, D-13).
  if (validAsParsed(route.httpPart, route.schema, route.url)) return () => true;
  const validate = zodValidatorCompiler(route);
  if (route.httpPart !== 'headers') return validate;
  const named = headersValidWhenAbsent(route.schema);
  return (data) => {
    const raw = data as Record<string, unknown>;
    // Most requests (every anonymous read) carry none of the headers a route names: nothing to check.
    if (named && !named.some((name) => raw[name] !== undefined)) return true;
    const result = validate(data) as { value?: Record<string, unknown> };
    if (result.value && Object.entries(result.value).every(([name, value]) => raw[name] === value)) {
      // Valid and unchanged: neither an error nor a value, so Fastify leaves request.headers alone.
      return true;
    }
    return result;
  };
};

/**
 * The header names of a loose object schema without checks of its own, when leaving every one of
 * them out parses to nothing added (each optional, no default): a request carrying none of them is
 * valid as it stands, whatever else it carries. Otherwise undefined, and every request is parsed.
 */
function headersValidWhenAbsent(schema: $ZodType): string[] | undefined {
  const def = uncheckedObject(schema);
  if (!def || !isLoose(def)) return undefined;
  const empty = safeParse(schema, {});
  return empty.success && Object.keys(empty.data as object).length === 0 ? Object.keys(def.shape) : undefined;
}

type ObjectDef = { type: 'object'; shape: Record<string, $ZodType>; catchall?: $ZodType };

/** An object schema's definition when it has no checks of its own (no refinement); else undefined. */
function uncheckedObject(schema: $ZodType): ObjectDef | undefined {
  const def = schema._zod.def as { type: string; shape?: Record<string, $ZodType>; checks?: unknown[] };
  return def.type === 'object' && def.shape && !def.checks?.length ? (def as ObjectDef) : undefined;
}

/** A loose object keeps the keys its shape does not name, as they are. */
function isLoose(def: ObjectDef): boolean {
  return def.catchall?._zod.def.type === 'unknown';
}

/**
 * Whether every value Fastify can give this part passes `schema` unchanged, so that parsing it
 * would only copy it. Path parameters are always strings: a plain object of plain strings (no
 * checks) naming exactly the route's parameters passes them all as they are. A query string is any
 * object of strings and arrays: only a loose object with no fields and no checks passes it
 * unchanged (a plain object would strip its keys). Anything else is parsed on every request.
 */
export function validAsParsed(httpPart: string | undefined, schema: $ZodType, url: string): boolean {
  const def = uncheckedObject(schema);
  if (!def) return false;
  const fields = Object.entries(def.shape);
  if (httpPart === 'querystring') return fields.length === 0 && isLoose(def);
  if (httpPart !== 'params' || url.includes('*')) return false;
  const names = [...url.matchAll(/:([A-Za-z0-9_]+)/g)].map((match) => match[1]);
  // `z.string()` itself: a format (`z.uuid()`, `z.email()`) or a check is more than its type.
  const plainString = (field: $ZodType) => {
    const fieldDef = field._zod.def as { type: string; checks?: unknown[] };
    return (
      fieldDef.type === 'string' &&
      Object.keys(fieldDef).every(
        (key) => key === 'type' || key === 'coerce' || (key === 'checks' && !fieldDef.checks?.length),
      )
    );
  };
  return (
    names.length === fields.length &&
    fields.every(([name, field]) => names.includes(name) && plainString(field))
  );
}
