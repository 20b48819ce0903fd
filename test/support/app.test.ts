import { access } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { createTestApp } from './app.js';

describe('createTestApp', () => {
  it.each([false, true])(
    'closes what it opened and removes its data directory when it fails to start (on disk: %s)',
    async (onDisk) => {
      let dataDir: string | undefined;
      await expect(
        createTestApp({
          onDisk,
          extend: (_app, ctx) => {
            dataDir = ctx.config.dataDir;
            throw new Error('a route that cannot be added');
          },
        }),
      ).rejects.toThrow('a route that cannot be added');
      expect(dataDir).toBeDefined();
      await expect(access(dataDir!)).rejects.toMatchObject({ code: 'ENOENT' });
    },
  );
});
