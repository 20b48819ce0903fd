import * as linguist from 'linguist-languages';
import { describe, expect, it } from 'vitest';
import { LINGUIST, type LinguistEntry } from '../../src/analysis/linguist-table.js';

describe('the language table', () => {
  it('holds what the installed linguist-languages says (else run `node scripts/linguist-table.mjs`)', () => {
    const expected = Object.fromEntries(
      Object.entries(linguist as unknown as Record<string, LinguistEntry>).map(([name, entry]) => [
        name,
        {
          type: entry.type,
          ...(entry.extensions ? { extensions: entry.extensions } : {}),
          ...(entry.filenames ? { filenames: entry.filenames } : {}),
          ...(entry.interpreters ? { interpreters: entry.interpreters } : {}),
        },
      ]),
    );
    expect(LINGUIST).toEqual(expected);
  });
});
