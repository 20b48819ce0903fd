import { describe, expect, it } from 'vitest';
import { lineIndex } from '../../src/scan/lines.js';
import { FORMAT_RULES } from '../../src/scan/secret-formats.js';
import { SECRET_RULES } from '../../src/scan/secret-rules.js';
import { createSecretScanner, redact, shannonEntropy } from '../../src/scan/secrets.js';
import { SECRET_SAMPLES } from './secret-samples.js';

const scanner = createSecretScanner();
const formatIds = new Set(FORMAT_RULES.map((r) => r.id));
const HAND_WRITTEN = SECRET_RULES.map((r) => r.id).filter((id) => !formatIds.has(id));
const scan = (path: string, text: string) => scanner.scan(path, text, lineIndex(text));

describe('secret rules', () => {
  it('has a true and a false positive sample for every hand-written rule', () => {
    expect(Object.keys(SECRET_SAMPLES).sort()).toEqual(HAND_WRITTEN.sort());
  });

  it.each(HAND_WRITTEN)('%s fires on its true positive with path, line and a redacted hint', (id) => {
    const { positive } = SECRET_SAMPLES[id]!;
    const text = `// configuration\nconst unrelated = 1;\n${positive}\n`;
    const findings = scan('src/config.ts', text);
    const hit = findings.find((f) => f.rule_id === id);
    expect(hit).toMatchObject({
      kind: 'secret',
      check: 'secrets',
      tier: 'blocking',
      path: 'src/config.ts',
    });
    // The line the value starts on: the sample's first line, or a later one of a multi-line sample.
    expect(hit!.line).toBeGreaterThanOrEqual(3);
    expect(hit!.line).toBeLessThan(3 + positive.split('\n').length);
    // The value itself is never in the finding.
    expect(JSON.stringify(findings)).not.toContain(positive.slice(-12));
    expect(hit!.hint).toMatch(/…\(\d+ chars\)$/);
  });

  it.each(HAND_WRITTEN)('%s stays quiet on its false positive', (id) => {
    const { negative } = SECRET_SAMPLES[id]!;
    expect(scan('src/config.ts', `const x = 1;\n${negative}\n`)).toEqual([]);
  });

  it('skips generic rules in test fixtures and examples but not provider tokens', () => {
    const generic = SECRET_SAMPLES['generic-secret-assignment']!.positive;
    const github = SECRET_SAMPLES['github-token']!.positive;
    expect(scan('test/fixtures/config.py', generic)).toEqual([]);
    expect(scan('.env.example', generic)).toEqual([]);
    expect(scan('test/fixtures/config.py', github).map((f) => f.rule_id)).toEqual(['github-token']);
  });

  it('reports each secret on its own line, once', () => {
    const a = SECRET_SAMPLES['npm-token']!.positive;
    const findings = scan('a.txt', `${a}\n\n${a} ${a}\n`);
    expect(findings.map((f) => f.line)).toEqual([1, 3]);
  });

  it('measures entropy and redacts to four characters', () => {
    expect(shannonEntropy('aaaa')).toBe(0);
    expect(shannonEntropy('abcd')).toBe(2);
    expect(redact('ABCDEFGHIJ')).toBe('ABCD…(10 chars)');
  });
});
