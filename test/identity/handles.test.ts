import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isReservedHandle, isValidName } from '../../src/identity/handles.js';
import { createTestApp, type TestApp } from '../support/app.js';

describe('handles', () => {
  it.each(['abc', 'a-b-c', '0x1', 'a'.repeat(39)])('accepts %s', (name) => {
    expect(isValidName(name)).toBe(true);
  });

  it.each(['ab', 'a'.repeat(40), '-ab', 'ab-', 'a--b', 'A-b', 'a_b', 'a.b', 'ä-b', ''])(
    'refuses %j',
    (name) => {
      expect(isValidName(name)).toBe(false);
    },
  );

  describe('reserved names', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp();
    });
    afterAll(async () => t.close());

    it('cover every first path segment the app serves that could be a handle', () => {
      // First-level children of `/` in Fastify's route tree, such as `api/health` or `docs`.
      const segments = t.app
        .printRoutes({ commonPrefix: false })
        .split('\n')
        .map((line) => /^│ {3}[├└]── ([^/\s(]+)/.exec(line)?.[1])
        .filter((segment): segment is string => segment !== undefined);
      expect(segments).toEqual(expect.arrayContaining(['api', 'docs', 'static']));
      const clashing = segments.filter((segment) => isValidName(segment) && !isReservedHandle(segment));
      expect(clashing).toEqual([]);
    });
  });
});
