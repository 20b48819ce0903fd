import { describe, expect, it } from 'vitest';
import { ADVISORY_MAX_AGE_DAYS, advisoriesStale } from '../../src/scan/dependency-checks.js';

describe('advisory data age', () => {
  it(`is stale without data and when the newest record is over ${ADVISORY_MAX_AGE_DAYS} days old`, () => {
    const now = new Date('2026-11-22T12:00:00Z');
    const daysAgo = (d: number) => new Date(now.getTime() - d * 86_400_000);
    expect(advisoriesStale({ newest: null }, now)).toBe(true);
    expect(advisoriesStale({ newest: daysAgo(ADVISORY_MAX_AGE_DAYS + 1) }, now)).toBe(true);
    expect(advisoriesStale({ newest: daysAgo(ADVISORY_MAX_AGE_DAYS - 1) }, now)).toBe(false);
    expect(advisoriesStale({ newest: now }, now)).toBe(false);
  });
});
