import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { decodeCursor, encodeCursor } from '../../src/platform/cursor.js';
import { AppError } from '../../src/platform/errors.js';

const Position = z.object({ at: z.string(), id: z.string() });

describe('cursors', () => {
  it('round-trips a position', () => {
    const position = { at: '2026-11-22T00:00:00.000Z', id: 'a' };
    expect(decodeCursor(encodeCursor(position), Position)).toEqual(position);
  });

  it.each(['', '!!!', 'bm90IGpzb24', encodeCursor({ other: 1 }), 'a'.repeat(600)])(
    'refuses %j as invalid_request naming the field',
    (cursor) => {
      try {
        decodeCursor(cursor, Position);
        expect.unreachable();
      } catch (error) {
        expect(error).toBeInstanceOf(AppError);
        expect((error as AppError).code).toBe('invalid_request');
        expect((error as AppError).details).toEqual({
          issues: [{ field: 'cursor', reason: expect.any(String) }],
        });
      }
    },
  );
});
