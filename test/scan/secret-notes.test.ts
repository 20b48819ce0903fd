import { generatePrivateKey } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { lineIndex } from '../../src/scan/lines.js';
import { assembleReport, toPublicScan } from '../../src/scan/report.js';
import { createSecretScanner } from '../../src/scan/secrets.js';
import { CHECK_IDS, MAX_SCAN_NOTES, type ScanNotes } from '../../src/scan/types.js';
import { fresh, freshValue, UPPER } from './fresh-secrets.js';

/** AWS's documented example key pair, from its documentation: allowed, and now said to be. */
const AWS_EXAMPLE_ID = 'AKIAIOSFODNN7EXAMPLE';
const AWS_EXAMPLE_SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';

const scanner = createSecretScanner();
function scan(path: string, text: string) {
  const notes: ScanNotes = { notes: [], omitted: 0 };
  const findings = scanner.scan(path, text, lineIndex(text), notes);
  return { findings, notes };
}

describe('notes on allowed documented examples and placeholders', () => {
  it("notes AWS's documented example key pair where it stands, redacted, and blocks nothing", () => {
    const text = `[default]\naws_access_key_id = ${AWS_EXAMPLE_ID}\naws_secret_access_key = ${AWS_EXAMPLE_SECRET}\n`;
    const { findings, notes } = scan('docs/credentials.ini', text);
    expect(findings).toEqual([]);
    expect(notes.omitted).toBe(0);
    // In rule order here; the report sorts them by path and line.
    expect(notes.notes.sort((a, b) => a.line - b.line)).toEqual([
      {
        kind: 'allowed_example',
        check: 'secrets',
        rule_id: 'aws-access-key-id',
        description: expect.stringMatching(/^AWS access key ID/),
        reason: 'it contains “EXAMPLE”',
        path: 'docs/credentials.ini',
        line: 2,
        hint: 'AKIA…(20 chars)',
      },
      {
        kind: 'allowed_example',
        check: 'secrets',
        rule_id: 'aws-secret-access-key',
        description: expect.stringMatching(/^AWS secret access key/),
        reason: 'it contains “EXAMPLE”',
        path: 'docs/credentials.ini',
        line: 3,
        hint: 'wJal…(40 chars)',
      },
    ]);
    // The value is never in a note, only its redacted hint.
    expect(JSON.stringify(notes)).not.toContain('IOSFODNN7');
    expect(JSON.stringify(notes)).not.toContain('K7MDENG');
  });

  it('still blocks a real-looking key, and notes only the example beside it', () => {
    const real = freshValue(() => `AKIA${fresh(16, `${UPPER}234567`)}`);
    const text = `AWS_ACCESS_KEY_ID=${real}\n# for example: AWS_ACCESS_KEY_ID=${AWS_EXAMPLE_ID}\n`;
    const { findings, notes } = scan('.env', text);
    expect(findings.map((f) => [f.rule_id, f.tier, f.line])).toEqual([['aws-access-key-id', 'blocking', 1]]);
    expect(notes.notes.map((n) => [n.rule_id, n.line])).toEqual([['aws-access-key-id', 2]]);
  });

  it('never notes a value its structure proves real: a secp256k1 key is blocking, not excused', () => {
    const key = generatePrivateKey();
    const { findings, notes } = scan(
      '.env.example',
      `# example, replace with your own\nPRIVATE_KEY=${key}\n`,
    );
    expect(findings.map((f) => f.rule_id)).toContain('evm-private-key');
    expect(notes.notes).toEqual([]);
  });

  it('says nothing of references to the environment, or of values no rule would have blocked', () => {
    const text = [
      // A secret-looking name and value by every other measure: only the reference excuses it.
      'api_key = "process.env.API_KEY_V2"',
      // Below the rule's entropy floor even without the placeholder word: it would never have blocked.
      `aws_secret_access_key = ${'EXAMPLE'.repeat(5)}AAAAA`,
      'PRIVATE_KEY=0xYOUR_PRIVATE_KEY',
      '',
    ].join('\n');
    const { findings, notes } = scan('src/config.ts', text);
    expect(findings).toEqual([]);
    expect(notes.notes).toEqual([]);
  });

  it('keeps at most MAX_SCAN_NOTES notes and counts the rest', () => {
    const lines = Array.from({ length: MAX_SCAN_NOTES + 7 }, () => `key: ${AWS_EXAMPLE_ID}`);
    const { findings, notes } = scan('docs/keys.md', `${lines.join('\n')}\n`);
    expect(findings).toEqual([]);
    expect(notes.notes).toHaveLength(MAX_SCAN_NOTES);
    expect(notes.omitted).toBe(7);
  });
});

describe('notes in the scan report', () => {
  const meta = Object.fromEntries(
    CHECK_IDS.map((id) => [id, { tool: 't', tool_version: '1' }]),
  ) as Parameters<typeof assembleReport>[0]['meta'];
  const capabilities = { tools: [], runs: [], hosts: [], env: [], install_runs: false, summary: '' };

  it('merges every pass, in path and line order, capped, and never touches the verdict, checks or counts', () => {
    const first = scan('z/last.md', `${AWS_EXAMPLE_ID}\n`).notes;
    const second = scan('a/first\u202e.md', `x\n${AWS_EXAMPLE_ID}\n`).notes;
    second.omitted = 3;
    const report = assembleReport({
      findings: [],
      notes: [first, second],
      capabilities,
      meta,
      at: new Date(0),
      filesScanned: 2,
      binarySkipped: 0,
    });
    expect(report.verdict).toBe('pass');
    expect(report.checks.find((c) => c.id === 'secrets')).toMatchObject({ status: 'pass', findings: 0 });
    expect(report.counts).toEqual({ blocking: 0, disclosed: 0, review: 0 });
    // Paths are escaped as findings' are.
    expect(report.notes!.map((n) => [n.path, n.line])).toEqual([
      ['a/first\\u202e.md', 2],
      ['z/last.md', 1],
    ]);
    expect(report.notes_omitted).toBe(3);

    const many = Array.from(
      { length: 3 },
      (_, i) => scan(`f${i}.md`, `${Array(MAX_SCAN_NOTES).fill(AWS_EXAMPLE_ID).join('\n')}\n`).notes,
    );
    const capped = assembleReport({
      findings: [],
      notes: many,
      capabilities,
      meta,
      at: new Date(0),
      filesScanned: 3,
      binarySkipped: 0,
    });
    expect(capped.notes).toHaveLength(MAX_SCAN_NOTES);
    expect(capped.notes!.every((n) => n.path === 'f0.md')).toBe(true);
    expect(capped.notes_omitted).toBe(2 * MAX_SCAN_NOTES);
    // Notes are the creator's: the public scan has none.
    expect(Object.keys(toPublicScan(capped))).not.toContain('notes');
    expect(JSON.stringify(toPublicScan(capped))).not.toContain('allowed_example');
  });
});
