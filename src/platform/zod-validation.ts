import type { FastifySchemaCompiler } from 'fastify';
import { validatorCompiler as zodValidatorCompiler } from 'fastify-type-provider-zod';
import type { $ZodType } from 'zod/v4/core';
import { safeParse } from 'zod/v4/core';

/**
 * fastify-type-provider-zod's validator, except that headers a schema only checked are left as
 * Node parsed them. Fastify keeps a validated headers object beside the raw one and merges the two
 * into a fresh copy on every `request.headers` read: several copies per request on the buy path,
 * a sixth of its handler's CPU (docs/BENCHMARKS.md). When the schema changed a value (a default, a
 * transform), the validated object is kept as before.
 */
export const validatorCompiler: FastifySchemaCompiler<$ZodType> = (route) => {
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
  const def = schema._zod.def as {
    type: string;
    shape?: Record<string, unknown>;
    catchall?: $ZodType;
    checks?: unknown[];
  };
  if (def.type !== 'object' || !def.shape || def.checks?.length) return undefined;
  if (def.catchall?._zod.def.type !== 'unknown') return undefined;
  const empty = safeParse(schema, {});
  return empty.success && Object.keys(empty.data as object).length === 0 ? Object.keys(def.shape) : undefined;
}
