import { afterEach, describe, expect, it } from 'vitest';
import { invites } from '../../src/db/schema/index.js';
import { consumeInvite, createInvites } from '../../src/identity/invites.js';
import { BACKENDS, openTestDatabase, type TestDatabase } from '../support/db.js';

describe.each(BACKENDS)('invites on %s', (backend) => {
  let database: TestDatabase;
  afterEach(async () => database?.close());

  it('creates distinct codes and stores only their hashes', async () => {
    database = await openTestDatabase(backend);
    const codes = await createInvites(database.db, 5);
    expect(new Set(codes).size).toBe(5);
    const rows = await database.db.select().from(invites);
    expect(rows).toHaveLength(5);
    for (const row of rows) {
      expect(row.codeHash).toMatch(/^[0-9a-f]{64}$/);
      expect(codes).not.toContain(row.codeHash);
    }
  });

  it('lets a code be used once; unknown codes never', async () => {
    database = await openTestDatabase(backend);
    const [code] = await createInvites(database.db, 1);
    const at = new Date('2026-11-22T00:00:00Z');
    expect(await consumeInvite(database.db, code!, 'creator-1', at)).toBe(true);
    expect(await consumeInvite(database.db, code!, 'creator-2', at)).toBe(false);
    expect(await consumeInvite(database.db, 'r402inv_unknown', 'creator-3', at)).toBe(false);
  });

  it('gives one of many concurrent uses the code', async () => {
    database = await openTestDatabase(backend);
    const [code] = await createInvites(database.db, 1);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => consumeInvite(database.db, code!, `creator-${i}`, new Date())),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it.each([0, -1, 1.5, 1001])('refuses count %s', async (count) => {
    database = await openTestDatabase(backend);
    await expect(createInvites(database.db, count)).rejects.toThrow(RangeError);
  });
});
