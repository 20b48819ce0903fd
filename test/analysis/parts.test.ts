import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { analyseCadence, cadenceSentence } from '../../src/analysis/cadence.js';
import { analyseComponents, type ComponentFile, componentsTouched } from '../../src/analysis/components.js';
import { detectLanguage } from '../../src/analysis/languages.js';
import { analyseLicence } from '../../src/analysis/licence.js';
import { checkLimits } from '../../src/scan/limits.js';

const require = createRequire(import.meta.url);
const spdx = require('spdx-license-list/full') as Record<string, { licenseText: string }>;
const DAY = 86_400_000;

describe('licence', () => {
  it('recognises licence texts, not file names', () => {
    const apache = spdx['Apache-2.0']!.licenseText;
    expect(analyseLicence(new Map([['LICENSE.txt', apache]]))).toEqual({
      spdx: 'Apache-2.0',
      verdict: 'matched',
    });
    expect(analyseLicence(new Map([['COPYING', spdx['GPL-3.0-only']!.licenseText]]))).toEqual({
      spdx: 'GPL-3.0-only',
      verdict: 'matched',
    });
    expect(
      analyseLicence(
        new Map([['LICENSE', 'All rights reserved. Do not copy this software without a written agreement.']]),
      ),
    ).toEqual({ spdx: 'NOASSERTION', verdict: 'unrecognised' });
    expect(analyseLicence(new Map([['package.json', '{"license":"ISC"}']]))).toEqual({
      spdx: 'ISC',
      verdict: 'declared',
    });
    expect(analyseLicence(new Map())).toEqual({ spdx: 'NONE', verdict: 'missing' });
  });
});

describe('languages', () => {
  it('resolves by file name, extension (ambiguous ones by preference) and shebang', () => {
    expect(detectLanguage('src/a.ts')?.name).toBe('TypeScript');
    expect(detectLanguage('README.md')?.name).toBe('Markdown');
    expect(detectLanguage('include/a.h')?.name).toBe('C');
    expect(detectLanguage('Dockerfile')?.name).toBe('Dockerfile');
    expect(detectLanguage('bin/tool', '#!/usr/bin/env python3')?.name).toBe('Python');
    expect(detectLanguage('bin/run', '#!/bin/bash')?.name).toBe('Shell');
    expect(detectLanguage('data.unknownext')).toBeUndefined();
  });
});

describe('components and artifact class', () => {
  const file = (path: string, extra: Partial<ComponentFile> = {}): ComponentFile => ({
    path,
    mode: '100644',
    binary: false,
    languageType: null,
    test: false,
    mcpServer: false,
    shebang: false,
    ...extra,
  });
  const skill = (name: string) => `---\nname: ${name}\ndescription: Does ${name}.\n---\nBody\n`;

  it('labels changed paths; a root package owns every path no narrower component claims', () => {
    const kept = new Map([
      ['package.json', JSON.stringify({ name: 'word-tools', version: '1.0.0', main: 'src/words.js' })],
      ['skills/count/SKILL.md', skill('count')],
    ]);
    const { components } = analyseComponents(
      [
        file('package.json'),
        file('src/words.js', { languageType: 'programming' }),
        file('skills/count/SKILL.md'),
      ],
      kept,
    );
    expect(componentsTouched(components, ['src/words.js'])).toEqual(['library:word-tools']);
    expect(componentsTouched(components, ['package.json'])).toEqual(['library:word-tools']);
    expect(componentsTouched(components, ['skills/count/SKILL.md'])).toEqual(['skill:count']);
    expect(componentsTouched(components, ['skills/count/SKILL.md', 'src/words.js'])).toEqual([
      'library:word-tools',
      'skill:count',
    ]);
  });

  it('detects components from contents, not names', () => {
    const kept = new Map([
      ['a/SKILL.md', skill('a')],
      ['b/SKILL.md', 'No frontmatter, so not a skill'],
      ['agents/reviewer.md', '---\nname: reviewer\ndescription: Reviews code\ntools: Read\n---\n'],
      ['agents/notes.md', 'just notes'],
      [
        '.claude/settings.json',
        JSON.stringify({
          hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: './guard.sh' }] }] },
        }),
      ],
    ]);
    const result = analyseComponents(
      [file('a/SKILL.md'), file('b/SKILL.md'), file('agents/reviewer.md'), file('agents/notes.md')],
      kept,
    );
    expect(result.inventory).toEqual([
      { kind: 'skill', count: 1 },
      { kind: 'agent', count: 1 },
      { kind: 'hook', count: 1 },
      { kind: 'doc', count: 2 },
    ]);
    expect(result.artifactClass).toBe('Harness');
    expect(result.runs).toEqual(['hook PreToolUse: ./guard.sh']);
  });

  it.each([
    [[['s1/SKILL.md', skill('one')]], 'Skill'],
    [
      [
        ['s1/SKILL.md', skill('one')],
        ['s2/SKILL.md', skill('two')],
      ],
      'Skill pack',
    ],
    [[['.mcp.json', '{"mcpServers":{"x":{"command":"node"}}}']], 'MCP server'],
    [
      [
        ['s1/SKILL.md', skill('one')],
        ['.mcp.json', '{"mcpServers":{"x":{"url":"https://x.io"}}}'],
      ],
      'Toolkit',
    ],
    [[['package.json', '{"name":"lib","main":"index.js"}']], 'Library'],
  ])('classes %j as %s', (files, expected) => {
    const kept = new Map(files as Array<[string, string]>);
    expect(
      analyseComponents(
        [...kept.keys()].map((p) => file(p)),
        kept,
      ).artifactClass,
    ).toBe(expected);
  });
});

describe('cadence', () => {
  it('measures gaps, on-time share and regularity once there are three releases', () => {
    const start = Date.parse('2026-01-01T00:00:00Z');
    const dates = [0, 10, 20, 30, 60].map((d) => new Date(start + d * DAY));
    const cadence = analyseCadence(dates, new Date(start + 65 * DAY), undefined);
    expect(cadence).toEqual({
      releases: 5,
      median_days_between_releases: 10,
      on_time_fraction: 0.75,
      days_since_last: 5,
      score: 0.88,
      finished: false,
    });
  });

  it('says what on time means, in words a reader can check', () => {
    const start = Date.parse('2026-01-01T00:00:00Z');
    const at = (days: number[]) => days.map((d) => new Date(start + d * DAY));
    const now = new Date(start + 65 * DAY);
    expect(cadenceSentence(analyseCadence(at([0, 10, 20, 30, 60]), now, undefined))).toBe(
      '5 releases, a median of 10 days apart; 75% of them came within 1.5 times the usual gap.',
    );
    expect(cadenceSentence(analyseCadence(at([0, 10, 20, 30]), now, undefined))).toBe(
      '4 releases, a median of 10 days apart; each came within 1.5 times the usual gap.',
    );
    expect(cadenceSentence(analyseCadence(at([0, 10]), now, undefined))).toBe(
      '2 releases, a median of 10 days apart.',
    );
  });
});

describe('limits', () => {
  it('blocks past 200 MB, 20,000 files, 50 MB per file and over-long paths', () => {
    const entries = Array.from({ length: 20_001 }, (_, i) => ({
      path: `f${i}`,
      mode: '100644',
      sha: 'x',
      size: 10_500,
    }));
    entries[0]!.size = 60 * 1024 * 1024;
    entries[1]!.path = `${'d/'.repeat(70)}x`;
    expect(checkLimits(entries).map((f) => [f.rule_id, f.path ?? null])).toEqual([
      ['total-size', null],
      ['file-count', null],
      ['file-size', 'f0'],
      ['path-depth', entries[1]!.path],
    ]);
  });
});
