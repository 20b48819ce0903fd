import type { FastifySchemaCompiler } from 'fastify';
import { validatorCompiler as zodValidatorCompiler } from 'fastify-type-provider-zod';
import type { $ZodType } from 'zod/v4/core';

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
  return (data) => {
    const result = validate(data) as { value?: Record<string, unknown> };
    const raw = data as Record<string, unknown>;
    if (result.value && Object.entries(result.value).every(([name, value]) => raw[name] === value)) {
      // Valid and unchanged: neither an error nor a value, so Fastify leaves request.headers alone.
      return true;
    }
    return result;
  };
};
