import { randomBytes, randomInt } from 'node:crypto';
import { createRequire } from 'node:module';
import { english, generatePrivateKey, mnemonicToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { lineIndex } from '../../src/scan/lines.js';
import { createSecretScanner } from '../../src/scan/secrets.js';
import { ALNUM, checksummedToken, fresh, HEX, WORD } from './fresh-secrets.js';

// The BIP-39 implementation the scanner's word list comes from (@scure/bip39, resolved from viem as
// src/scan/crypto-secrets.ts resolves it): phrases are made and checked here independently of our code.
const fromViem = createRequire(createRequire(import.meta.url).resolve('viem'));
const bip39 = fromViem('@scure/bip39') as {
  entropyToMnemonic(entropy: Uint8Array, wordlist: string[]): string;
  validateMnemonic(mnemonic: string, wordlist: string[]): boolean;
};

const scanner = createSecretScanner();
const scan = (path: string, text: string) => scanner.scan(path, text, lineIndex(text));
const ids = (path: string, text: string) => scan(path, text).map((f) => f.rule_id);

/** A phrase from fresh entropy: 16, 20, 24, 28 or 32 bytes give 12, 15, 18, 21 or 24 words. */
const phrase = (words: number) => bip39.entropyToMnemonic(randomBytes((words / 3) * 4), english);

/**
 * A valid phrase with `word` at `position` (among the words made of entropy bits only, so the
 * checksum is computed over it): the word's 11 bits are written into fresh entropy.
 */
function phraseWith(word: string, position: number, words = 12): string {
  const index = english.indexOf(word);
  expect(index).toBeGreaterThanOrEqual(0);
  const entropy = randomBytes((words / 3) * 4);
  for (let b = 0; b < 11; b++) {
    const bit = position * 11 + b;
    const on = (index >> (10 - b)) & 1;
    entropy[bit >> 3] = (entropy[bit >> 3]! & ~(0x80 >> (bit & 7))) | (on << (7 - (bit & 7)));
  }
  const made = bip39.entropyToMnemonic(entropy, english);
  expect(made.split(' ')[position]).toBe(word);
  return made;
}

describe('placeholder words never excuse a value its structure proves real', () => {
  it('finds every one of 300 fresh 12-word phrases and 60 of each longer length, wherever they stand', () => {
    const phrases = [
      ...Array.from({ length: 300 }, () => phrase(12)),
      ...[15, 18, 21, 24].flatMap((n) => Array.from({ length: 60 }, () => phrase(n))),
      // About 1 fresh 12-word phrase in 57 holds `example`, `test` or `sample` by chance; these do surely.
      ...Array.from({ length: 20 }, () => phraseWith('example', randomInt(11))),
    ];
    const missed: string[] = [];
    for (const p of phrases) {
      expect(bip39.validateMnemonic(p, english)).toBe(true);
      const files: Array<[string, string]> = [
        ['wallet.txt', `${p}\n`],
        ['src/config.ts', `// for example, your recovery phrase:\nexport const MNEMONIC = "${p}";\n`],
        ['.env.example', `# example values, replace with your own\nMNEMONIC="${p}"\n`],
        [
          'docs/backup.md',
          `Backup words (example):\n\n${p
            .split(' ')
            .map((w, i) => `${i + 1}. ${w}`)
            .join('\n')}\n`,
        ],
      ];
      for (const [path, text] of files)
        if (!ids(path, text).includes('bip39-seed-phrase')) missed.push(`${path}: ${p}`);
    }
    expect(missed).toEqual([]);
    expect(phrases.filter((p) => /\b(?:example|test|sample)\b/.test(p)).length).toBeGreaterThanOrEqual(20);
  });

  it('finds a valid phrase with `example` forced into it, at any position, in any length', () => {
    for (const words of [12, 15, 18, 21, 24]) {
      const position = randomInt(words - 1);
      const p = phraseWith('example', position, words);
      expect(bip39.validateMnemonic(p, english)).toBe(true);
      for (const [path, text] of [
        ['wallet.txt', `${p}\n`],
        ['examples/seed.txt', `${p}\n`],
        ['src/wallet.ts', `const mnemonic = "${p}";\n`],
      ] as const)
        expect(ids(path, text), `${words} words, ${path}`).toContain('bip39-seed-phrase');
    }
    // `example`, `test` and `sample` together (all three are BIP-39 words): set them, then take a last
    // word that makes the checksum hold (for 12 words, 128 of the 2,048 do).
    const list = phraseWith('example', 1).split(' ');
    list[5] = 'test';
    list[9] = 'sample';
    const three = english
      .map((last) => [...list.slice(0, 11), last].join(' '))
      .find((candidate) => bip39.validateMnemonic(candidate, english))!;
    expect(three).toMatch(/\bexample\b.*\btest\b.*\bsample\b/);
    expect(ids('wallet.txt', `${three}\n`)).toEqual(['bip39-seed-phrase']);
  });

  it('still passes the published phrases and runs of list words without a checksum', () => {
    const vectors = [0x00, 0x7f, 0x80, 0xff].flatMap((byte) =>
      [16, 24, 32].map((n) => bip39.entropyToMnemonic(new Uint8Array(n).fill(byte), english)),
    );
    const text = [
      `accounts: { mnemonic: "${'test '.repeat(11)}junk" },`,
      ...vectors.map((v) => `// BIP-39 test vector: ${v}`),
      'Any twelve words from the list: ability able about above absent absorb abstract absurd abuse access accident account.',
    ].join('\n');
    expect(scan('hardhat.config.ts', text)).toEqual([]);
  });

  it('finds GitHub and npm tokens whose checksum holds whatever their random part spells', () => {
    for (const spelled of ['EXAMPLE', 'example', 'YOUR', 'xxxx', 'Dummy', 'REDACTED', 'changeme']) {
      for (const prefix of ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_', 'npm_']) {
        const random = `${spelled}${fresh(30 - spelled.length, ALNUM)}`;
        const token = checksummedToken(prefix, random);
        const rule = prefix === 'npm_' ? 'npm-token' : 'github-token';
        expect(ids('src/ci.ts', `export const token = '${token}';\n`), token.slice(0, 12)).toContain(rule);
        // The same words without a checksum that holds: a documented placeholder, excused.
        const broken = `${token.slice(0, -6)}${token.slice(-6) === '000000' ? '000001' : '000000'}`;
        expect(ids('src/ci.ts', `export const token = '${broken}';\n`)).toEqual([]);
      }
    }
  });

  it('finds fresh secp256k1 keys, also one whose hex holds a placeholder sequence', () => {
    const keys = Array.from({ length: 300 }, () => generatePrivateKey());
    const sequence = `0x${fresh(20, HEX)}0123456789${fresh(34, HEX)}`;
    keys.push(sequence as `0x${string}`);
    const missed = keys.filter((k) => !ids('.env.example', `PRIVATE_KEY=${k}\n`).includes('evm-private-key'));
    expect(missed).toEqual([]);
  });

  it('still passes keys that are not random: zero, out of range, repeated, the development keys', () => {
    const devKey = Buffer.from(
      mnemonicToAccount(`${'test '.repeat(11)}junk`, { addressIndex: 3 }).getHdKey().privateKey!,
    ).toString('hex');
    const text = [
      `PRIVATE_KEY=0x${'0'.repeat(64)}`,
      `PRIVATE_KEY=0x${'1'.repeat(64)}`,
      `PRIVATE_KEY=0x${'f'.repeat(64)}`,
      `PRIVATE_KEY=0x${'abcdef0123456789'.repeat(4)}`,
      `PRIVATE_KEY=0x${'deadbeef'.repeat(8)}`,
      `PRIVATE_KEY=0x${devKey}`,
      'PRIVATE_KEY=0xYOUR_PRIVATE_KEY',
    ].join('\n');
    expect(scan('.env.example', text)).toEqual([]);
  });

  it('excuses a placeholder word only as people write it, in one case', () => {
    // A token without a checksum: `YOUR`/`your` reads as a placeholder, `yOuR` is chance.
    const chance = `sk-proj-${fresh(30, WORD)}yOuR${fresh(40, WORD)}T3BlbkFJ${fresh(74, WORD)}`;
    expect(ids('src/ai.ts', `export const key = '${chance}';\n`)).toContain('openai-key');
    for (const written of ['your', 'YOUR', 'Your', 'EXAMPLE', 'dummy', 'xxxx'])
      expect(ids('src/ai.ts', `export const key = 'sk-proj-${written}-${fresh(50, ALNUM)}';\n`)).toEqual([]);
  });
});
