import { findMnemonic, isEvmPrivateKey, isKeystore } from './crypto-secrets.js';
import { FORMAT_RULES, type FormatRule, formatRegex } from './secret-formats.js';
import { hasTokenChecksum } from './token-checksums.js';
import type { Severity } from './types.js';

/**
 * The secret rules, kept as data. A rule runs on a file only when one of its `keywords` occurs in
 * it (case-insensitive), so the regexes stay off most text. The capture group `secret` is the value
 * that entropy and allowlists look at; it is never stored, only a redacted hint of it.
 */
export interface SecretRule {
  id: string;
  description: string;
  keywords: string[];
  /** JavaScript regex source; must contain the named group `secret`. */
  pattern: string;
  flags?: string;
  /** Minimum Shannon entropy (bits per character) of the secret. */
  entropy?: number;
  severity: Severity;
  /** Generic rules are skipped in test-fixture and example paths (specific token formats are not). */
  generic?: boolean;
  /**
   * Value-after-a-name rules (generic ones and `name = value` provider rules): skipped in lockfiles,
   * whose names and hashes are never credentials.
   */
  assignment?: boolean;
  /** The rule runs only on paths matching this regex source. */
  path?: string;
  /** Also run on files up to this many characters whatever their keywords. */
  alwaysBelow?: number;
  /** A final check of a match: the reported secret, or undefined when it is not one. */
  confirm?: (secret: string, text: string) => string | undefined;
  /**
   * Whether the match's own structure proves it real (a provider checksum that holds, a BIP-39
   * checksum, a secp256k1 scalar). Placeholder words (`example`, `your_…`, `xxxx`) never excuse a
   * proven value: the random part of a real token or phrase can spell them.
   */
  proof?: (secret: string) => boolean;
}

const B64 = 'A-Za-z0-9+/';

export const SECRET_RULES: SecretRule[] = [
  {
    id: 'private-key',
    description: 'Private key (PEM or OpenSSH)',
    keywords: ['private key'],
    pattern: `-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----(?<secret>[${B64}=\\s\\\\:,.-]{64,}?)-----END`,
    severity: 'CRITICAL',
  },
  {
    id: 'aws-access-key-id',
    description: 'AWS access key ID',
    keywords: ['akia', 'asia', 'abia', 'acca', 'a3t'],
    pattern: '\\b(?<secret>(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})\\b',
    severity: 'CRITICAL',
  },
  {
    id: 'aws-secret-access-key',
    description: 'AWS secret access key',
    keywords: ['aws'],
    pattern: `aws.{0,20}?(?:secret|private)?.{0,10}?key.{0,5}?['"]?\\s*(?::|=>|=)\\s*['"]?(?<secret>[${B64}]{40})(?![${B64}])`,
    flags: 'i',
    entropy: 4,
    severity: 'CRITICAL',
  },
  {
    id: 'gcp-api-key',
    description: 'Google Cloud API key',
    keywords: ['aiza'],
    pattern: '\\b(?<secret>AIza[0-9A-Za-z_-]{35})(?![0-9A-Za-z_-])',
    severity: 'HIGH',
  },
  {
    id: 'gcp-service-account',
    description: 'Google Cloud service-account key file',
    keywords: ['service_account'],
    pattern:
      '"type"\\s*:\\s*"service_account"[\\s\\S]{0,400}?"private_key_id"\\s*:\\s*"(?<secret>[0-9a-f]{40})"',
    severity: 'CRITICAL',
  },
  {
    id: 'azure-storage-key',
    description: 'Azure storage account key',
    keywords: ['accountkey'],
    pattern: `AccountKey=(?<secret>[${B64}]{86}==)`,
    flags: 'i',
    severity: 'CRITICAL',
  },
  {
    id: 'azure-client-secret',
    description: 'Azure AD client secret',
    keywords: ['q~'],
    pattern: '(?<![A-Za-z0-9_~.-])(?<secret>[A-Za-z0-9_~.]{3}\\dQ~[A-Za-z0-9_~.-]{31,34})(?![A-Za-z0-9_~.-])',
    entropy: 3.5,
    severity: 'CRITICAL',
  },
  {
    id: 'github-token',
    description: 'GitHub token',
    keywords: ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_'],
    pattern: '\\b(?<secret>gh[pousr]_[A-Za-z0-9]{36,255})\\b',
    severity: 'CRITICAL',
    proof: hasTokenChecksum,
  },
  {
    id: 'github-fine-grained-token',
    description: 'GitHub fine-grained personal access token',
    keywords: ['github_pat_'],
    pattern: '\\b(?<secret>github_pat_[A-Za-z0-9_]{82})\\b',
    severity: 'CRITICAL',
  },
  {
    id: 'gitlab-token',
    description: 'GitLab personal access token',
    keywords: ['glpat-'],
    pattern: '\\b(?<secret>glpat-[A-Za-z0-9_-]{20,})',
    severity: 'CRITICAL',
  },
  {
    id: 'npm-token',
    description: 'npm access token',
    keywords: ['npm_'],
    pattern: '\\b(?<secret>npm_[A-Za-z0-9]{36})\\b',
    severity: 'CRITICAL',
    proof: hasTokenChecksum,
  },
  {
    id: 'pypi-token',
    description: 'PyPI or TestPyPI upload token',
    // The prefix is the macaroon's start: version 2, then the location `pypi.org` / `test.pypi.org`.
    keywords: ['pypi-ageichlwas5vcmc', 'pypi-agendgvzdc5wexbplm9yzw'],
    pattern: '\\b(?<secret>pypi-(?:AgEIcHlwaS5vcmc|AgENdGVzdC5weXBpLm9yZw)[A-Za-z0-9_-]{50,})',
    severity: 'CRITICAL',
  },
  {
    id: 'stripe-key',
    description: 'Stripe secret or restricted key',
    keywords: ['sk_live_', 'sk_test_', 'sk_prod_', 'rk_live_', 'rk_test_', 'rk_prod_'],
    pattern: '\\b(?<secret>[rs]k_(?:live|test|prod)_[A-Za-z0-9]{24,})\\b',
    severity: 'CRITICAL',
  },
  {
    id: 'slack-token',
    description: 'Slack token',
    keywords: ['xoxb-', 'xoxp-', 'xoxa-', 'xoxr-', 'xoxs-', 'xoxe-'],
    // Legacy workspace tokens (`xoxa-`, `xoxr-`) can be as short as 8 characters after the prefix.
    pattern: '\\b(?<secret>xox[abeprs]-[0-9A-Za-z-]{20,}|xox[ar]-(?:\\d-)?[0-9A-Za-z]{8,19}(?![0-9A-Za-z-]))',
    severity: 'HIGH',
  },
  {
    id: 'slack-webhook',
    description: 'Slack incoming webhook URL',
    keywords: ['hooks.slack.com'],
    pattern:
      '(?:https?://)?hooks\\.slack\\.com/(?:services/(?<secret>T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]{20,})|(?:workflows|triggers)/(?<secret2>T[A-Z0-9]+/[A-Za-z0-9/]{20,}))',
    severity: 'HIGH',
  },
  {
    id: 'discord-webhook',
    description: 'Discord webhook URL',
    keywords: ['discord.com/api/webhooks', 'discordapp.com/api/webhooks'],
    pattern:
      'https://(?:ptb\\.|canary\\.)?discord(?:app)?\\.com/api/webhooks/\\d+/(?<secret>[A-Za-z0-9_-]{60,})',
    severity: 'HIGH',
  },
  {
    id: 'telegram-bot-token',
    description: 'Telegram bot token',
    keywords: [':aa'],
    pattern: '\\b(?<secret>\\d{8,10}:AA[A-Za-z0-9_-]{33})(?![A-Za-z0-9_-])',
    severity: 'HIGH',
  },
  {
    id: 'sendgrid-key',
    description: 'SendGrid API key',
    keywords: ['sg.'],
    pattern: '\\b(?<secret>SG\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{43})(?![A-Za-z0-9_-])',
    severity: 'HIGH',
  },
  {
    id: 'openai-key',
    description: 'OpenAI API key',
    keywords: ['t3blbkfj', 'sk-proj-', 'sk-svcacct-', 'sk-admin-'],
    pattern:
      '\\b(?<secret>sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}|[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}))(?![A-Za-z0-9_-])',
    severity: 'CRITICAL',
  },
  {
    id: 'anthropic-key',
    description: 'Anthropic API key',
    keywords: ['sk-ant-'],
    pattern: '\\b(?<secret>sk-ant-(?:api|admin)\\d\\d-[A-Za-z0-9_-]{80,})',
    severity: 'CRITICAL',
  },
  {
    id: 'huggingface-token',
    description: 'Hugging Face access token',
    keywords: ['hf_'],
    pattern: '\\b(?<secret>hf_[A-Za-z]{34})\\b',
    entropy: 3.5,
    severity: 'HIGH',
  },
  {
    id: 'groq-key',
    description: 'Groq API key',
    keywords: ['gsk_'],
    pattern: '\\b(?<secret>gsk_[A-Za-z0-9]{52})\\b',
    severity: 'HIGH',
  },
  {
    // Before Vault 1.10 a service token was `s.` and 24 base62 characters. `s.` alone starts many
    // property accesses, so the value must mix digits, upper and lower case like a generated one,
    // and must not continue as a chain or a call (`s.x.y`, `s.x(`).
    id: 'vault-legacy-token',
    description: 'HashiCorp Vault service token (legacy format)',
    keywords: ['s.'],
    pattern:
      '(?<![\\w.$-])(?<secret>s\\.(?=[A-Za-z0-9]{0,23}[0-9])(?=[A-Za-z0-9]{0,23}[A-Z])(?=[A-Za-z0-9]{0,23}[a-z])[A-Za-z0-9]{24})(?![\\w.(-])',
    entropy: 3.5,
    severity: 'CRITICAL',
  },
  {
    id: 'jwt',
    description: 'JSON Web Token',
    keywords: ['eyj'],
    pattern: '\\b(?<secret>eyJ[A-Za-z0-9_-]{10,}\\.eyJ[A-Za-z0-9_-]{10,}\\.[A-Za-z0-9_-]{20,})',
    severity: 'HIGH',
    generic: true,
  },
  {
    id: 'database-url-password',
    description: 'Database connection URL with a password',
    keywords: ['postgres', 'mysql', 'mariadb', 'mongodb', 'redis', 'amqp'],
    pattern:
      '\\b(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\\+srv)?|rediss?|amqps?)://[^\\s:@/\'"`]*:(?<secret>[^\\s@/\'"`]{4,})@[^\\s\'"`]+',
    flags: 'i',
    severity: 'HIGH',
  },
  {
    id: 'generic-secret-assignment',
    description: 'High-entropy value assigned to a secret-looking name',
    keywords: ['key', 'secret', 'token', 'passw', 'pwd', 'credential'],
    pattern:
      '(?<![Pp]ublic[_-]?|[Pp]ub[_-]?|[Cc]srf[_-]?|[Xx]srf[_-]?)(?:api[_-]?key|apikey|secret(?:[_-]?key)?|access[_-]?key|auth[_-]?token|access[_-]?token|token|passw(?:or)?d|pwd|client[_-]?secret|credentials?)["\']?\\s*(?::=|=>|:|=)\\s*["\'`]?(?<secret>[A-Za-z0-9_\\-+/=.~!@#$%^&*]{16,})',
    flags: 'i',
    entropy: 3.7,
    severity: 'HIGH',
    generic: true,
    assignment: true,
  },
  {
    id: 'curl-auth-header',
    description: 'Credential in a curl Authorization header',
    keywords: ['curl'],
    pattern:
      '\\bcurl\\b[^\\n]*?(?:-H|--header)[ =]?["\']Authorization:[ \\t]*(?:Bearer|Token|Basic)[ \\t]+(?<secret>[\\w=~@.+/-]{8,})',
    flags: 'i',
    entropy: 3,
    severity: 'HIGH',
  },
  {
    id: 'curl-auth-user',
    description: 'Password in a curl --user argument',
    keywords: ['curl'],
    pattern: '\\bcurl\\b[^\\n]*?[ \\t](?:-u|--user)[ =]?["\']?[\\w.@-]+:(?<secret>[^\\s\'"$<>{}]{6,})',
    entropy: 3,
    severity: 'HIGH',
  },
  {
    id: 'kubernetes-secret',
    description: 'Kubernetes Secret manifest with data values',
    keywords: ['kind: secret', 'kind: "secret"', "kind: 'secret'"],
    pattern:
      '\\bkind:[ \\t]*["\']?Secret["\']?[ \\t]*\\n[\\s\\S]{0,300}?\\ndata:[ \\t]*\\n[ \\t]+[\\w.-]+:[ \\t]*["\']?(?<secret>[A-Za-z0-9+/]{12,}={0,3})["\']?[ \\t]*$',
    flags: 'm',
    entropy: 3,
    severity: 'HIGH',
  },
  {
    id: 'nuget-config-password',
    description: 'Password in a NuGet configuration file',
    keywords: ['<add key='],
    pattern: '<add key="(?:ClearText)?Password"\\s+value="(?<secret>[^"]{8,})"',
    flags: 'i',
    entropy: 2.5,
    severity: 'HIGH',
  },
  {
    id: 'evm-private-key',
    description: 'Raw EVM (Ethereum) private key in a key-like assignment or wallet constructor',
    keywords: [
      'priv',
      'secret',
      'signer',
      'wallet',
      'deployer',
      'owner',
      'eth_key',
      'evm',
      'pk',
      'from_key',
      'mnemonic',
    ],
    pattern:
      '(?:(?:private[_-]?key|priv[_-]?key|privkey|secret[_-]?key|signer[_-]?key|wallet[_-]?key|deployer[_-]?key|owner[_-]?key|eth[_-]?key|evm[_-]?key|\\bpk)\\w{0,20}["\'`]?[ \\t]{0,3}(?::=|=>|\\?=|:|=)[ \\t]{0,3}["\'`]?|(?:new[ \\t]+(?:ethers\\.)?Wallet|privateKeyToAccount|from_key|fromPrivateKey|privateKeyToAddress)\\([ \\t]*["\'`])(?<secret>(?:0x)?[0-9a-fA-F]{64})(?![0-9A-Za-z_])',
    flags: 'i',
    entropy: 3,
    severity: 'CRITICAL',
    confirm: (secret) => (isEvmPrivateKey(secret) ? secret : undefined),
    proof: isEvmPrivateKey,
  },
  {
    id: 'bip39-seed-phrase',
    description: 'BIP-39 wallet seed phrase (English word list, valid checksum)',
    keywords: [
      'mnemonic',
      'seed',
      'phrase',
      'recovery',
      'words',
      'wallet',
      'bip39',
      'bip-39',
      'secret',
      'backup',
    ],
    pattern: '(?<secret>\\b[a-z]{3,8}(?:[ \\t",\'\\r\\n\\d.)-]{1,6}[a-z]{3,8}\\b){11,40})',
    flags: 'i',
    alwaysBelow: 4096,
    severity: 'CRITICAL',
    confirm: (run) => findMnemonic(run),
    proof: (run) => findMnemonic(run) !== undefined,
  },
  {
    id: 'keystore-json',
    description: 'Encrypted wallet keystore (Web3 Secret Storage JSON)',
    keywords: ['ciphertext'],
    pattern: '"ciphertext"\\s*:\\s*"(?<secret>[0-9a-fA-F]{32,})"',
    flags: 'i',
    severity: 'CRITICAL',
    confirm: (secret, text) => (isKeystore(text) ? secret : undefined),
  },
  ...FORMAT_RULES.map(fromFormat),
];

function fromFormat(rule: FormatRule): SecretRule {
  const value = rule.formats.map(formatRegex).join('|');
  const base = {
    id: rule.id,
    description: rule.description,
    keywords: rule.keywords,
    entropy: rule.entropy,
    severity: rule.severity ?? 'HIGH',
  };
  // A prefixed token stands on its own: not inside a longer word, nor inside base64 (`+EAAA…` in an
  // embedded font is data, not a Square token).
  if (!rule.names) return { ...base, pattern: `(?<![A-Za-z0-9_+/-])(?<secret>${value})(?![A-Za-z0-9_+-])` };
  const names = rule.names.map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|');
  return {
    ...base,
    pattern: `(?:${names})[\\w.-]{0,24}?["'\`]?[ \\t]{0,3}(?::{1,3}=|=>|\\?=|:|=|,)[ \\t]{0,3}["'\`]?(?<secret>${value})(?![A-Za-z0-9_-])`,
    flags: 'i',
    assignment: true,
  };
}
