import { z } from 'zod';
import { ERROR_CODES, ERRORS, type ErrorCode } from '../errors.js';

export const ErrorSchema = z
  .object({
    code: z
      .enum(ERROR_CODES as [ErrorCode, ...ErrorCode[]])
      .meta({ description: 'Match on this, not on the message' }),
    message: z.string(),
    docs_url: z.string().meta({ description: '{base_url}/docs/errors#<code>' }),
    details: z.record(z.string(), z.unknown()).optional().meta({
      description:
        '`issues` ([{field, reason}]) on invalid_request; `payment_required` (a fresh 402 body) on price_changed',
    }),
    retry_after_seconds: z.number().int().optional().meta({ description: 'Present on rate_limited' }),
  })
  .meta({ id: 'Error', description: 'The body of every failure on every route' });

/**
 * OpenAPI response entries for the error codes a route can produce, grouped by status, each
 * naming its codes. Routes list their own codes; `internal` and `paused` apply to every route
 * (health alone is never paused: it uses `documentErrors` directly).
 */
export function errorResponses(...codes: ErrorCode[]) {
  return documentErrors([...codes, 'internal', 'paused']);
}

export function documentErrors(codes: ErrorCode[]) {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = ERRORS[code].status;
    const list = byStatus.get(status) ?? [];
    if (!list.includes(code)) list.push(code);
    byStatus.set(status, list);
  }
  return Object.fromEntries(
    [...byStatus].map(([status, list]) => [
      status,
      {
        description: list.map((code) => `\`${code}\``).join(', '),
        content: { 'application/json': { schema: ErrorSchema } },
      },
    ]),
  );
}

/** `/{owner}/{slug}` path parameters. A name that cannot exist is simply not found, never a 400. */
export const OwnerSlugParams = z.object({
  owner: z.string().meta({ description: 'The creator handle' }),
  slug: z.string().meta({ description: 'The listing slug' }),
});
