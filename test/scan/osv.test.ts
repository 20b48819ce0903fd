import { describe, expect, it } from 'vitest';
import { isAffected, normaliseName, recordSeverity } from '../../src/scan/osv.js';

const range = (...events: object[]) => ({
  ranges: [{ type: 'ECOSYSTEM', events }],
  versions: [] as string[],
});

describe('OSV matching', () => {
  it('evaluates introduced/fixed ranges with several intervals (npm semver)', () => {
    const minimist = {
      ranges: [
        ...range({ introduced: '0' }, { fixed: '0.2.4' }).ranges,
        ...range({ introduced: '1.0.0' }, { fixed: '1.2.6' }).ranges,
      ],
      versions: [],
    };
    expect(isAffected('npm', minimist, '0.2.3')).toBe(true);
    expect(isAffected('npm', minimist, '0.2.4')).toBe(false);
    expect(isAffected('npm', minimist, '1.2.5')).toBe(true);
    expect(isAffected('npm', minimist, '1.2.6')).toBe(false);
    expect(isAffected('npm', minimist, '2.0.0')).toBe(false);
    expect(isAffected('npm', minimist, 'not-a-version')).toBe(false);
  });

  it('handles last_affected, explicit versions and open ranges', () => {
    expect(isAffected('npm', range({ introduced: '1.0.0' }, { last_affected: '1.4.0' }), '1.4.0')).toBe(true);
    expect(isAffected('npm', range({ introduced: '1.0.0' }, { last_affected: '1.4.0' }), '1.4.1')).toBe(
      false,
    );
    expect(isAffected('npm', range({ introduced: '0' }), '99.0.0')).toBe(true);
    expect(isAffected('PyPI', { ranges: [], versions: ['1.0.0'] }, '1.0.0')).toBe(true);
  });

  it('compares PyPI versions by PEP 440 and Go versions with their v prefix', () => {
    const pyyaml = range({ introduced: '0' }, { fixed: '5.4' });
    expect(isAffected('PyPI', pyyaml, '5.3.1')).toBe(true);
    expect(isAffected('PyPI', pyyaml, '5.4b2')).toBe(true);
    expect(isAffected('PyPI', pyyaml, '5.4')).toBe(false);
    expect(isAffected('PyPI', pyyaml, '5.4.post1')).toBe(false);
    const go = range({ introduced: '0' }, { fixed: '0.17.0' });
    expect(isAffected('Go', go, 'v0.16.0')).toBe(true);
    expect(isAffected('Go', go, 'v0.17.0')).toBe(false);
    expect(isAffected('crates.io', range({ introduced: '0.1.0' }, { fixed: '0.3.2' }), '0.3.1')).toBe(true);
  });

  it('normalises PyPI names (PEP 503) only', () => {
    expect(normaliseName('PyPI', 'PyYAML')).toBe('pyyaml');
    expect(normaliseName('PyPI', 'zope.interface_x')).toBe('zope-interface-x');
    expect(normaliseName('npm', 'Lodash')).toBe('Lodash');
  });

  it('takes the database severity, else the CVSS base score', () => {
    const vector = (score: string) => ({
      id: 'X',
      modified: '2024-01-01T00:00:00Z',
      severity: [{ type: 'CVSS_V3', score }],
    });
    expect(
      recordSeverity({
        ...vector('CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:L'),
        database_specific: { severity: 'HIGH' },
      }).severity,
    ).toBe('HIGH');
    expect(recordSeverity(vector('CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H'))).toEqual({
      severity: 'CRITICAL',
      score: 9.8,
    });
    expect(recordSeverity(vector('CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:H/A:N')).severity).toBe('HIGH');
    expect(recordSeverity(vector('CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:L')).severity).toBe('MODERATE');
    expect(recordSeverity({ id: 'X', modified: '2024-01-01T00:00:00Z' }).severity).toBeNull();
  });
});
