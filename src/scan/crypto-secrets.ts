import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';

/**
 * Checks behind the wallet rules: a BIP-39 phrase is only a phrase when every word is in the
 * English list and the checksum holds; an EVM key only when it is a valid secp256k1 scalar and not
 * one of the publicly documented development keys. These are structural proofs: a value that
 * passes is reported whatever words it contains (`example`, `test` and `sample` are BIP-39 words).
 * What is excused is a value whose randomness is absent (a repeated pattern: BIP-39's test vectors,
 * `0x1111…`) or published (the development mnemonic and its keys), never a value for its words.
 */
const require = createRequire(import.meta.url);
let words: Map<string, number> | undefined;
let devKeys: Set<string> | undefined;

/** The documented development mnemonic of Hardhat, Anvil and Foundry: its keys are public. */
const DEV_MNEMONIC = `${'test '.repeat(11)}junk`;

function wordIndex(): Map<string, number> {
  if (!words) {
    // viem's own BIP-39 word list (@scure/bip39, resolved from viem, a direct dependency): loading
    // viem/accounts whole would cost ~0.4 s in every file-pass worker.
    const fromViem = createRequire(require.resolve('viem'));
    const { wordlist } = fromViem('@scure/bip39/wordlists/english') as { wordlist: string[] };
    words = new Map(wordlist.map((w, i) => [w, i]));
  }
  return words;
}

const VALID_LENGTHS = [24, 21, 18, 15, 12];

/** Whether these words are a BIP-39 English mnemonic with a valid checksum. */
export function isBip39Mnemonic(list: string[]): boolean {
  return mnemonicEntropy(list) !== undefined;
}

/** The entropy a BIP-39 English mnemonic encodes, or undefined when it is not one (checksum included). */
function mnemonicEntropy(list: string[]): Buffer | undefined {
  if (!VALID_LENGTHS.includes(list.length)) return undefined;
  const index = wordIndex();
  let bits = '';
  for (const word of list) {
    const at = index.get(word);
    if (at === undefined) return undefined;
    bits += at.toString(2).padStart(11, '0');
  }
  const checksumBits = list.length / 3;
  const entropyBits = bits.slice(0, bits.length - checksumBits);
  const entropy = Buffer.alloc(entropyBits.length / 8);
  for (let i = 0; i < entropy.length; i++)
    entropy[i] = Number.parseInt(entropyBits.slice(i * 8, i * 8 + 8), 2);
  const hash = createHash('sha256').update(entropy).digest();
  const expected = [...hash]
    .map((b) => b.toString(2).padStart(8, '0'))
    .join('')
    .slice(0, checksumBits);
  return expected === bits.slice(bits.length - checksumBits) ? entropy : undefined;
}

/**
 * A BIP-39 phrase inside a run of words: the longest window of a valid length whose words form a
 * mnemonic with a valid checksum. Not counted: the development mnemonic, and phrases whose entropy
 * is one byte repeated (BIP-39's published test vectors: `abandon` × 11 `about` is all zeros,
 * `zoo` × 11 `wrong` all ones, `legal winner thank year …` 0x7f, `letter advice cage …` 0x80).
 */
export function findMnemonic(run: string): string | undefined {
  const list = run.toLowerCase().match(/[a-z]+/g) ?? [];
  if (list.length < 12) return undefined;
  const index = wordIndex();
  for (const length of VALID_LENGTHS) {
    for (let start = 0; start + length <= list.length; start++) {
      const window = list.slice(start, start + length);
      if (!window.every((w) => index.has(w))) continue;
      const phrase = window.join(' ');
      if (phrase === DEV_MNEMONIC) continue;
      const entropy = mnemonicEntropy(window);
      if (entropy && !entropy.every((b) => b === entropy[0])) return phrase;
    }
  }
  return undefined;
}

const CURVE_ORDER = BigInt('0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141');

function developmentKeys(): Set<string> {
  if (!devKeys) {
    const { mnemonicToAccount } = require('viem/accounts') as {
      mnemonicToAccount: (
        m: string,
        o: { addressIndex: number },
      ) => { getHdKey(): { privateKey: Uint8Array | null } };
    };
    devKeys = new Set();
    for (let i = 0; i < 20; i++) {
      const key = mnemonicToAccount(DEV_MNEMONIC, { addressIndex: i }).getHdKey().privateKey;
      if (key) devKeys.add(Buffer.from(key).toString('hex'));
    }
  }
  return devKeys;
}

/**
 * A 32-byte hex value that is a usable secp256k1 private key, not a public development key, and
 * not a short unit repeated (`1111…`, `abcdef0123456789` × 4): a generated key is never periodic,
 * a typed placeholder often is.
 */
export function isEvmPrivateKey(value: string): boolean {
  const hex = value.replace(/^0x/i, '').toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(hex)) return false;
  const scalar = BigInt(`0x${hex}`);
  if (scalar === 0n || scalar >= CURVE_ORDER) return false;
  if ([1, 2, 4, 8, 16, 32].some((p) => hex === hex.slice(0, p).repeat(64 / p))) return false;
  return !developmentKeys().has(hex);
}

/** A Web3 Secret Storage (keystore v3) file: its `crypto` object with cipher text, KDF and MAC. */
export function isKeystore(text: string): boolean {
  return /"kdf"\s*:/i.test(text) && /"mac"\s*:/i.test(text) && /"cipher"\s*:/i.test(text);
}
