import { describe, expect, it } from 'vitest';
import type { TreeEntry } from '../../src/analysis/git.js';
import { checkPaths, escapeDisplay, MAX_FINDINGS_PER_RULE } from '../../src/scan/paths.js';
import { MAX_LINK_HOPS, resolveSymlinks } from '../../src/scan/symlinks.js';

const entry = (path: string, mode = '100644'): TreeEntry => ({ path, mode, sha: '0'.repeat(40), size: 1 });
const resolve = (links: Record<string, string>) =>
  Object.fromEntries(resolveSymlinks(new Map(Object.entries(links))));

describe('symlink resolution', () => {
  it('keeps links that resolve inside the tree, following other links and the link own folder', () => {
    expect(
      resolve({
        'docs/latest': 'v2',
        'docs/v2': '../src',
        'bin/tool': '../scripts/./tool.sh',
        'sub/readme': '../README.md',
        root: '.',
      }),
    ).toEqual({
      'docs/latest': { inside: true, resolved: 'src' },
      'docs/v2': { inside: true, resolved: 'src' },
      'bin/tool': { inside: true, resolved: 'scripts/tool.sh' },
      'sub/readme': { inside: true, resolved: 'README.md' },
      root: { inside: true, resolved: '' },
    });
  });

  it('refuses absolute and escaping targets, the way the issue reproduced them', () => {
    expect(
      resolve({ passwd: '/etc/passwd', shadow: '../../../../etc/shadow', slash: '/', up: '..' }),
    ).toEqual({
      passwd: { inside: false, reason: 'absolute' },
      shadow: { inside: false, reason: 'escapes' },
      slash: { inside: false, reason: 'absolute' },
      up: { inside: false, reason: 'escapes' },
    });
  });

  it('is not fooled by lexical normalisation: x -> . makes y -> x/.. escape', () => {
    expect(resolve({ x: '.', y: 'x/..' }).y).toEqual({ inside: false, reason: 'escapes' });
    // The same through a link that itself escapes, and through a link in a folder.
    expect(resolve({ up: '..', z: 'up/anything' }).z).toEqual({ inside: false, reason: 'escapes' });
    expect(resolve({ 'a/here': '.', 'a/b': 'here/..' })['a/b']).toEqual({ inside: true, resolved: '' });
    expect(resolve({ 'a/here': '.', 'a/b': 'here/../..' })['a/b']).toEqual({
      inside: false,
      reason: 'escapes',
    });
  });

  it('reads Windows separators, drive letters and case-insensitive names conservatively', () => {
    expect(resolve({ bs: '..\\..\\x', drive: 'C:\\Windows', unc: '\\\\host\\share' })).toEqual({
      bs: { inside: false, reason: 'escapes' },
      drive: { inside: false, reason: 'absolute' },
      unc: { inside: false, reason: 'absolute' },
    });
    // On a case-insensitive file system d/l is written through D, and .. from the root escapes.
    expect(resolve({ D: '.', 'd/l': '..' })['d/l']).toEqual({ inside: false, reason: 'escapes' });
    // On a case-sensitive one d is a real folder: ../../.. from d escapes even though D is deep.
    expect(resolve({ D: 'deep/er/dir', 'd/l': '../../..' })['d/l']).toEqual({
      inside: false,
      reason: 'escapes',
    });
  });

  it(`gives up after ${MAX_LINK_HOPS} hops (loops) and refuses targets no OS would create`, () => {
    expect(resolve({ a: 'b', b: 'a' })).toEqual({
      a: { inside: false, reason: 'too-many-hops' },
      b: { inside: false, reason: 'too-many-hops' },
    });
    const chain = Object.fromEntries(
      Array.from({ length: MAX_LINK_HOPS + 1 }, (_, i) => [
        `l${i}`,
        i === MAX_LINK_HOPS ? 'file' : `l${i + 1}`,
      ]),
    );
    expect(resolve(chain).l0).toEqual({ inside: false, reason: 'too-many-hops' });
    expect(resolve(chain).l1).toEqual({ inside: true, resolved: 'file' });
    expect(resolve({ empty: '', nul: 'a\0b', long: 'a/'.repeat(2100) })).toEqual({
      empty: { inside: false, reason: 'invalid' },
      nul: { inside: false, reason: 'invalid' },
      long: { inside: false, reason: 'invalid' },
    });
  });
});

describe('path checks', () => {
  it('escapes backslashes, control characters and hidden Unicode JSON-style', () => {
    expect(escapeDisplay('back\\..\\win.bat')).toBe('back\\\\..\\\\win.bat');
    expect(escapeDisplay('a\nb\r\tc\u001b[31m\u0085')).toBe('a\\nb\\r\\tc\\u001b[31m\\u0085');
    expect(escapeDisplay('invoice\u202egnp.exe')).toBe('invoice\\u202egnp.exe');
    expect(escapeDisplay('x\u{E0041}\u2028')).toBe('x\\udb40\\udc41\\u2028');
    expect(escapeDisplay('plain/naïve ünïcode.md')).toBe('plain/naïve ünïcode.md');
  });

  it('blocks backslashes (limits), control characters and bidi overrides in names (injection)', () => {
    const findings = checkPaths(
      [
        entry('back\\..\\..\\win-evil.bat'),
        entry('notes\nrm -rf.txt'),
        entry('invoice\u202egnp.exe'),
        entry('emoji 👨‍👩‍👧.md'),
        entry('src/index.ts'),
      ],
      new Map(),
    );
    expect(findings.map((f) => [f.check, f.tier, f.rule_id, f.path])).toEqual([
      ['limits', 'blocking', 'path-backslash', 'back\\..\\..\\win-evil.bat'],
      ['injection', 'blocking', 'path-control-character', 'notes\nrm -rf.txt'],
      ['injection', 'blocking', 'path-bidi-control', 'invoice\u202egnp.exe'],
    ]);
    expect(findings.every((f) => f.line === undefined)).toBe(true);
  });

  it('discloses every symlink with its target escaped and blocks the escaping ones', () => {
    const links = new Map([
      ['etc', '/etc/passwd'],
      ['latest', 'docs'],
      ['odd', 'docs\u202e/x\ny'],
    ]);
    const findings = checkPaths(
      [...links.keys()].map((p) => entry(p, '120000')),
      links,
    );
    expect(findings.map((f) => [f.check, f.tier, f.rule_id, f.path, f.description])).toEqual([
      ['limits', 'disclosed', 'symlink', 'etc', 'Symlink to /etc/passwd'],
      [
        'limits',
        'blocking',
        'symlink-escape',
        'etc',
        'Symlink to an absolute path (/etc/passwd): once extracted it points outside the release',
      ],
      ['limits', 'disclosed', 'symlink', 'latest', 'Symlink to docs'],
      ['limits', 'disclosed', 'symlink', 'odd', 'Symlink to docs\\u202e/x\\ny'],
    ]);
  });

  it(`keeps at most ${MAX_FINDINGS_PER_RULE} findings per rule and counts the rest`, () => {
    const links = new Map(Array.from({ length: 150 }, (_, i) => [`l${String(i).padStart(3, '0')}`, '..']));
    const findings = checkPaths([], links);
    for (const rule of ['symlink', 'symlink-escape']) {
      const own = findings.filter((f) => f.rule_id === rule);
      expect(own).toHaveLength(MAX_FINDINGS_PER_RULE + 1);
      expect(own.at(-1)).toMatchObject({ description: '…and 50 more findings of this rule' });
      expect(own.at(-1)).not.toHaveProperty('path');
    }
  });
});
