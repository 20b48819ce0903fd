import type { z } from 'zod';
import { AppError } from './errors.js';

/**
 * Opaque page cursors: base64url of a JSON position. Clients must treat them as opaque; a cursor
 * that does not decode to the expected shape is `400 invalid_request`, never a server fault.
 */

export function encodeCursor(position: unknown): string {
  return Buffer.from(JSON.stringify(position), 'utf8').toString('base64url');
}

export function decodeCursor<T>(cursor: string, shape: z.ZodType<T>, field = 'cursor'): T {
  let value: unknown;
  try {
    if (!/^[A-Za-z0-9_-]{1,512}$/.test(cursor)) throw new Error('bad alphabet');
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw AppError.invalid([{ field, reason: 'not a cursor returned by this API' }]);
  }
  const parsed = shape.safeParse(value);
  if (!parsed.success) throw AppError.invalid([{ field, reason: 'not a cursor returned by this API' }]);
  return parsed.data;
}
