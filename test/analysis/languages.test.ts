import { afterAll, describe, expect, it } from 'vitest';
import { countsTowardsLanguages } from '../../src/analysis/languages.js';
import { analyseTree } from '../../src/releases/inspection/analyse-tree.js';
import { buildRepo } from '../fixtures/git-repo.js';

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

const MIT = `MIT License

Copyright (c) 2026 Ada

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
`;

const library = Array.from(
  { length: 33 },
  (_, i) => `export const add${i} = (a: number, b: number): number => a + b + ${i};`,
).join('\n');

describe('languages follow linguist', () => {
  it('counts only programming and markup outside vendored, generated and documentation paths', () => {
    expect(countsTowardsLanguages('src/a.ts', 'programming')).toBe(true);
    expect(countsTowardsLanguages('index.html', 'markup')).toBe(true);
    expect(countsTowardsLanguages('LICENSE', 'prose')).toBe(false);
    expect(countsTowardsLanguages('README.md', 'prose')).toBe(false);
    expect(countsTowardsLanguages('config.yaml', 'data')).toBe(false);
    expect(countsTowardsLanguages('docs/example.ts', 'programming')).toBe(false);
    expect(countsTowardsLanguages('examples/demo.py', 'programming')).toBe(false);
    expect(countsTowardsLanguages('node_modules/x/index.js', 'programming')).toBe(false);
    expect(countsTowardsLanguages('dist/index.js', 'programming')).toBe(false);
    expect(countsTowardsLanguages('src/api.pb.go', 'programming')).toBe(false);
  });

  it('reads a 33-line TypeScript library with a LICENSE, README, manifest and docs as TypeScript 100%', async () => {
    const built = await buildRepo([
      {
        'src/index.ts': `${library}\n`,
        LICENSE: MIT,
        'README.md': `# adders\n\n${'Adds numbers together, thirty-three ways.\n'.repeat(20)}`,
        'package.json': '{"name":"adders","version":"1.0.0","main":"dist/index.js","license":"MIT"}\n',
        'tsconfig.json': '{"compilerOptions":{"strict":true}}\n',
        '.github/workflows/ci.yml': 'on: push\njobs: {}\n',
        'docs/usage.md': '# Usage\n\nCall `add0(1, 2)`.\n',
        'examples/demo.js': "console.log(require('adders').add0(1, 2));\n",
        'dist/index.js': 'exports.add0=(a,b)=>a+b;\n'.repeat(50),
      },
    ]);
    cleanups.push(built.cleanup);
    const now = new Date('2026-01-01T00:00:00Z');
    const { computed } = await analyseTree({
      repoPath: built.dir,
      commit: built.shas[0]!,
      channel: 'stable',
      version: '1.0.0',
      publishedAt: now,
      earlierDates: [],
      now,
      workers: 0,
    });
    expect(computed.languages).toEqual({ TypeScript: Buffer.byteLength(`${library}\n`) });
    expect(computed.inventory_sentence).toMatch(/\(TypeScript 100%\)\.$/);
    expect(computed.inventory_sentence).not.toMatch(/Text|Markdown|JSON|YAML/);
  });
});
