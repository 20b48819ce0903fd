import { randomInt } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { looksLikePlaceholder, shannonEntropy } from '../../src/scan/secrets.js';

/**
 * Values generated fresh on every run (`crypto.randomInt`), in each provider's alphabet and length
 * and with its checksum where the format has one. Nothing secret-shaped is written in the repository.
 */
export const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
export const LOWER = 'abcdefghijklmnopqrstuvwxyz';
export const DIGITS = '0123456789';
export const ALNUM = UPPER + LOWER + DIGITS;
export const WORD = `${ALNUM}_-`;
export const HEX = '0123456789abcdef';
export const B64 = `${ALNUM}+/`;

export function fresh(length: number, alphabet: string): string {
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[randomInt(alphabet.length)];
  return out;
}

/**
 * A fresh value that does not read as a placeholder by chance (a random part can spell `your` or
 * `xxxx`) and reaches the rule's entropy floor (a short random value can repeat itself below it):
 * both excuse a value unless its structure proves it real, and the tests of that rule generate such
 * values on purpose (secret-placeholders.test.ts).
 */
export function freshValue(make: () => string, entropy = 0): string {
  return freshValues(() => [make()], entropy)[0]!;
}

/** Fresh values of every variant a generator makes, each passing as `freshValue` says. */
export function freshValues(make: () => string[], entropy = 0): string[] {
  for (;;) {
    const values = make();
    if (!values.some((v) => looksLikePlaceholder(v) || shannonEntropy(v) < entropy)) return values;
  }
}

/** Base62 in GitHub's digit order (digits, upper, lower), written here apart from the scanner's own. */
const BASE62 = DIGITS + UPPER + LOWER;
function base62(n: number, width: number): string {
  let out = '';
  for (let v = n; v > 0; v = Math.floor(v / 62)) out = BASE62[v % 62] + out;
  return out.padStart(width, '0');
}

/**
 * A token as GitHub's and npm's generators make them: the prefix, 30 random base62 characters (or
 * `random` when given), then the CRC32 of the random part in base62, six characters.
 */
export function checksummedToken(prefix: string, random = fresh(30, ALNUM)): string {
  return `${prefix}${random}${base62(crc32(random), 6)}`;
}

const pem = (label: string) =>
  `-----BEGIN ${label}-----\n${Array.from({ length: 8 }, () => fresh(64, B64)).join('\n')}\n${fresh(20, B64)}==\n-----END ${label}-----`;
const b64url = (text: string) => Buffer.from(text).toString('base64url');

/**
 * Every hand-written rule anchored by the value itself (a prefix, a header, a URL shape), with
 * fresh values of each variant it covers. The other hand-written rules need a context (a name, a
 * command, a manifest) and are listed in `CONTEXT_RULES`.
 */
export const ANCHORED_SAMPLES: Record<string, () => string[]> = {
  'private-key': () =>
    ['RSA PRIVATE KEY', 'PRIVATE KEY', 'EC PRIVATE KEY', 'OPENSSH PRIVATE KEY', 'ENCRYPTED PRIVATE KEY'].map(
      pem,
    ),
  'aws-access-key-id': () =>
    ['AKIA', 'ASIA', 'ABIA', 'ACCA', `A3T${fresh(1, UPPER + DIGITS)}`].map(
      (p) => `${p}${fresh(16, `${UPPER}234567`)}`,
    ),
  'azure-storage-key': () => [
    `DefaultEndpointsProtocol=https;AccountName=${fresh(12, LOWER)};AccountKey=${fresh(86, B64)}==;EndpointSuffix=core.windows.net`,
  ],
  'azure-client-secret': () => [
    `${fresh(3, `${ALNUM}_~.`)}${fresh(1, DIGITS)}Q~${fresh(randomInt(31, 35), `${ALNUM}_~.`)}`,
  ],
  'gcp-api-key': () => [`AIza${fresh(35, WORD)}`],
  'github-token': () => ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_'].map((p) => checksummedToken(p)),
  'github-fine-grained-token': () => [`github_pat_${fresh(22, ALNUM)}_${fresh(59, ALNUM)}`],
  'gitlab-token': () => [
    `glpat-${fresh(20, WORD)}`,
    `glpat-${fresh(randomInt(27, 60), WORD)}.${fresh(2, LOWER + DIGITS)}${fresh(7, LOWER + DIGITS)}`,
  ],
  'npm-token': () => [checksummedToken('npm_')],
  'pypi-token': () => [
    `pypi-AgEIcHlwaS5vcmc${fresh(randomInt(60, 200), WORD)}`,
    `pypi-AgENdGVzdC5weXBpLm9yZw${fresh(randomInt(60, 200), WORD)}`,
  ],
  'stripe-key': () => [
    `sk_live_${fresh(24, ALNUM)}`,
    `sk_live_${fresh(99, ALNUM)}`,
    `rk_live_${fresh(99, ALNUM)}`,
    `sk_test_${fresh(99, ALNUM)}`,
    `rk_prod_${fresh(32, ALNUM)}`,
  ],
  'slack-token': () => [
    `xoxb-${fresh(12, DIGITS)}-${fresh(13, DIGITS)}-${fresh(24, ALNUM)}`,
    `xoxb-${fresh(10, DIGITS)}-${fresh(24, ALNUM)}`,
    `xoxp-${fresh(12, DIGITS)}-${fresh(12, DIGITS)}-${fresh(13, DIGITS)}-${fresh(32, HEX)}`,
    `xoxe-1-${fresh(146, UPPER + DIGITS)}`,
    `xoxs-${fresh(10, DIGITS)}-${fresh(12, DIGITS)}-${fresh(13, DIGITS)}-${fresh(64, HEX)}`,
    `xoxa-2-${fresh(randomInt(8, 20), ALNUM)}`,
    `xoxr-${fresh(randomInt(8, 49), ALNUM)}`,
  ],
  'slack-webhook': () => [
    `https://hooks.slack.com/services/T${fresh(10, UPPER + DIGITS)}/B${fresh(10, UPPER + DIGITS)}/${fresh(24, ALNUM)}`,
    `hooks.slack.com/services/T${fresh(8, UPPER + DIGITS)}/B${fresh(11, UPPER + DIGITS)}/${fresh(24, ALNUM)}`,
    `https://hooks.slack.com/workflows/T${fresh(10, UPPER + DIGITS)}/A${fresh(10, UPPER + DIGITS)}/${fresh(18, DIGITS)}/${fresh(24, ALNUM)}`,
  ],
  'discord-webhook': () => [
    `https://discord.com/api/webhooks/${fresh(18, DIGITS)}/${fresh(68, WORD)}`,
    `https://canary.discordapp.com/api/webhooks/${fresh(19, DIGITS)}/${fresh(68, WORD)}`,
  ],
  'telegram-bot-token': () => [`${fresh(10, DIGITS)}:AA${fresh(33, WORD)}`],
  'sendgrid-key': () => [`SG.${fresh(22, WORD)}.${fresh(43, WORD)}`],
  'openai-key': () => [
    `sk-proj-${fresh(74, WORD)}T3BlbkFJ${fresh(74, WORD)}`,
    `sk-svcacct-${fresh(58, WORD)}T3BlbkFJ${fresh(58, WORD)}`,
    `sk-admin-${fresh(58, WORD)}T3BlbkFJ${fresh(58, WORD)}`,
    `sk-${fresh(20, ALNUM)}T3BlbkFJ${fresh(20, ALNUM)}`,
  ],
  'anthropic-key': () => [`sk-ant-api03-${fresh(93, WORD)}AA`, `sk-ant-admin01-${fresh(93, WORD)}AA`],
  'huggingface-token': () => [`hf_${fresh(34, UPPER + LOWER)}`],
  'groq-key': () => [`gsk_${fresh(52, ALNUM)}`],
  'vault-legacy-token': () => {
    for (;;) {
      const value = `s.${fresh(24, ALNUM)}`;
      if (/\d/.test(value) && /[A-Z]/.test(value) && /[a-z]/.test(value.slice(2))) return [value];
    }
  },
  jwt: () => [
    `${b64url('{"alg":"HS256","typ":"JWT"}')}.${b64url(`{"sub":"${fresh(12, DIGITS)}","iat":${Date.now()}}`)}.${fresh(43, WORD)}`,
  ],
  'database-url-password': () => [
    `postgres://app:${fresh(20, ALNUM)}@db.internal:5432/app`,
    `mongodb+srv://svc:${fresh(24, ALNUM)}@cluster0.${fresh(5, LOWER)}.mongodb.net/prod`,
    `rediss://default:${fresh(32, ALNUM)}@cache.internal:6380`,
  ],
};

/** Hand-written rules that need a context around the value, not anchored by the value alone. */
export const CONTEXT_RULES = [
  'aws-secret-access-key',
  'gcp-service-account',
  'generic-secret-assignment',
  'curl-auth-header',
  'curl-auth-user',
  'kubernetes-secret',
  'nuget-config-password',
  'evm-private-key',
  'bip39-seed-phrase',
  'keystore-json',
];
