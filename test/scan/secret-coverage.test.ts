import { createHash, randomUUID } from 'node:crypto';
import { mnemonicToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { lineIndex } from '../../src/scan/lines.js';
import { FORMAT_RULES, formatSample } from '../../src/scan/secret-formats.js';
import { SECRET_RULES } from '../../src/scan/secret-rules.js';
import { createSecretScanner } from '../../src/scan/secrets.js';
import { ALNUM, randomChars } from '../fixtures/git-repo.js';
import { freshValue } from './fresh-secrets.js';

const scanner = createSecretScanner();
const scan = (path: string, text: string) => scanner.scan(path, text, lineIndex(text));
const hex = (n: number, seed: number) => randomChars(n, '0123456789abcdef', seed);

// The credential families of gitleaks' default configuration (v8, 222 rules), by the ids we cover
// them with: every family has a rule here (docs/SCANNING.md lists the mapping).
const GITLEAKS_FAMILIES = [
  '1password',
  'adafruit',
  'adobe',
  'age',
  'airtable',
  'alibaba',
  'anthropic',
  'artifactory',
  'asana',
  'atlassian',
  'authress',
  'aws',
  'azure',
  'beamer',
  'bitbucket',
  'bittrex',
  'cisco-meraki',
  'clickhouse',
  'clojars',
  'cloudflare',
  'codecov',
  'cohere',
  'coinbase',
  'confluent',
  'contentful',
  'curl',
  'databricks',
  'datadog',
  'defined-networking',
  'digitalocean',
  'discord',
  'doppler',
  'droneci',
  'dropbox',
  'duffel',
  'dynatrace',
  'easypost',
  'etsy',
  'facebook',
  'fastly',
  'finicity',
  'finnhub',
  'flickr',
  'flutterwave',
  'flyio',
  'frameio',
  'freshbooks',
  'gcp',
  'generic',
  'github',
  'gitlab',
  'gitter',
  'gocardless',
  'grafana',
  'harness',
  'terraform',
  'heroku',
  'hubspot',
  'huggingface',
  'infracost',
  'intercom',
  'intra42',
  'jfrog',
  'jwt',
  'kraken',
  'kubernetes',
  'kucoin',
  'launchdarkly',
  'linear',
  'linkedin',
  'lob',
  'mailchimp',
  'mailgun',
  'mapbox',
  'mattermost',
  'maxmind',
  'messagebird',
  'microsoft-teams',
  'netlify',
  'new-relic',
  'notion',
  'npm',
  'nuget',
  'nytimes',
  'octopus',
  'okta',
  'openai',
  'openshift',
  'perplexity',
  'plaid',
  'planetscale',
  'postman',
  'prefect',
  'private-key',
  'privateai',
  'pulumi',
  'pypi',
  'rapidapi',
  'readme',
  'rubygems',
  'scalingo',
  'sendbird',
  'sendgrid',
  'sendinblue',
  'sentry',
  'settlemint',
  'shippo',
  'shopify',
  'sidekiq',
  'slack',
  'snyk',
  'sonar',
  'sourcegraph',
  'square',
  'stripe',
  'sumologic',
  'telegram',
  'travisci',
  'twilio',
  'twitch',
  'twitter',
  'typeform',
  'vault',
  'yandex',
  'zendesk',
];

describe('secret coverage', () => {
  it('has a rule for every credential family of the gitleaks default configuration', () => {
    const ids = SECRET_RULES.map((r) => r.id);
    const missing = GITLEAKS_FAMILIES.filter((family) => !ids.some((id) => id.startsWith(family)));
    expect(missing).toEqual([]);
  });

  // The rules for tokens without a prefix of their own, each format with a fresh value under a name
  // containing the provider's (`TWITTER_API_KEY = "…"`). Prefixed tokens are found standing alone
  // (secret-anchors.test.ts).
  const cases = FORMAT_RULES.filter((rule) => rule.names).flatMap((rule) =>
    rule.formats.map((format, f) => {
      const name = rule.names![0]!;
      const line = () =>
        `${/[_.-]$/.test(name) ? name : `${name}_`}api_key = "${freshValue(() => formatSample(format), rule.entropy)}"`;
      return [`${rule.id} #${f + 1}`, rule.id, line] as const;
    }),
  );

  it.each(cases)('%s fires on a fresh value of its format after its name', (_, id, line) => {
    const findings = scan('src/settings.py', `# settings\n${line()}\n`);
    expect(findings.map((f) => f.rule_id)).toContain(id);
    expect(findings.find((f) => f.rule_id === id)!.line).toBe(2);
  });

  it('finds a raw EVM private key in assignments and wallet constructors, not in hashes', () => {
    const key = hex(64, 50);
    for (const line of [
      `PRIVATE_KEY=0x${key}`,
      `deployerPrivateKey: "${key}"`,
      `const wallet = new ethers.Wallet("0x${key}", provider);`,
      `const account = privateKeyToAccount('0x${key}');`,
    ])
      expect(scan('src/deploy.ts', line).map((f) => f.rule_id)).toContain('evm-private-key');
    expect(scan('src/deploy.ts', `const txHash = "0x${key}";\nconst storageKey = "0x${key}";`)).toEqual([]);
    // Above the curve order: not a key.
    expect(scan('src/deploy.ts', `PRIVATE_KEY=0x${'f'.repeat(56)}${hex(8, 51)}`)).toEqual([]);
  });

  it('finds BIP-39 phrases only with a valid checksum, in any small file and after a keyword', async () => {
    const { english, generateMnemonic } = await import('viem/accounts');
    const phrase = generateMnemonic(english);
    expect(scan('wallet.txt', `${phrase}\n`).map((f) => f.rule_id)).toEqual(['bip39-seed-phrase']);
    const long = generateMnemonic(english, 256);
    const big = `${'// filler line of code\n'.repeat(400)}const seed = [${long
      .split(' ')
      .map((w) => `'${w}'`)
      .join(', ')}];\n`;
    expect(scan('src/wallet.ts', big).map((f) => f.rule_id)).toEqual(['bip39-seed-phrase']);
    // The same words with the last two swapped almost never keep the checksum; find a pair that breaks it.
    const words = phrase.split(' ');
    const broken = [...words.slice(0, 10), words[11], words[10]].join(' ');
    const { isBip39Mnemonic } = await import('../../src/scan/crypto-secrets.js');
    if (!isBip39Mnemonic(broken.split(' '))) expect(scan('wallet.txt', `${broken}\n`)).toEqual([]);
  });

  it('stays quiet on hashes, UUIDs, lockfile integrity, public keys and documented placeholders', () => {
    const sha256 = createHash('sha256').update('a').digest('hex');
    const sha1 = createHash('sha1').update('a').digest('hex');
    const sha512b64 = createHash('sha512').update('a').digest('base64');
    const devKey = Buffer.from(
      mnemonicToAccount(`${'test '.repeat(11)}junk`, { addressIndex: 0 }).getHdKey().privateKey!,
    ).toString('hex');
    const uuid = randomUUID();
    const files: Record<string, string> = {
      'src/hashes.ts': [
        `const sha256 = "${sha256}";`,
        `checksum = "${sha256}"`,
        `commit ${sha1}`,
        `"shasum": "${sha1}",`,
        `const blockHash = "0x${sha256}";`,
        `const txHash = '0x${sha256}';`,
        `etag: "${createHash('md5').update('a').digest('hex')}"`,
      ].join('\n'),
      'src/ids.ts': [
        `const requestId = "${uuid}";`,
        `"uuid": "${uuid}",`,
        `session_token = "${uuid}"`,
        `tenant: ${uuid}`,
        `X-Request-Id: ${uuid}`,
      ].join('\n'),
      'package-lock.json': JSON.stringify({
        packages: {
          'node_modules/datadog-metrics': {
            version: '0.11.0',
            resolved: 'https://registry.npmjs.org/datadog-metrics/-/datadog-metrics-0.11.0.tgz',
            integrity: `sha512-${sha512b64}`,
          },
          'node_modules/@sentry/node': { integrity: `sha512-${sha512b64}`, token: sha256 },
        },
      }),
      'yarn.lock': `"sentry-cli@^2.0.0":\n  version "2.0.0"\n  integrity sha512-${sha512b64}\n  checksum ${sha256}\n`,
      'go.sum': `github.com/twilio/twilio-go v1.0.0 h1:${sha512b64.slice(0, 43)}=\n`,
      'keys/id_ed25519.pub': `ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI${randomChars(43, ALNUM, 60)} dev@laptop\n`,
      'keys/public.pem': `-----BEGIN PUBLIC KEY-----\n${randomChars(64, ALNUM, 61)}\n${randomChars(64, ALNUM, 62)}\n-----END PUBLIC KEY-----\n`,
      'src/wallet.ts': [
        `const publicKey = "0x04${hex(128, 63)}";`,
        `const public_token = "${randomChars(32, ALNUM, 64)}";`,
        `const address = "0x${hex(40, 65)}";`,
        `PUBLIC_KEY=0x${hex(66, 66)}`,
      ].join('\n'),
      '.env.example': [
        'PRIVATE_KEY=0xYOUR_PRIVATE_KEY',
        `PRIVATE_KEY=0x${'0'.repeat(64)}`,
        `PRIVATE_KEY=0x${'abcdef0123456789'.repeat(4)}`,
        'STRIPE_KEY=sk_live_xxxxxxxxxxxxxxxxxxxxxxxx',
        'DATADOG_API_KEY=<your-datadog-api-key>',
        `TWILIO_AUTH_TOKEN=${'$'}{TWILIO_AUTH_TOKEN}`,
      ].join('\n'),
      'hardhat.config.ts': [
        `accounts: { mnemonic: "${'test '.repeat(11)}junk" },`,
        `const PRIVATE_KEY = "0x${devKey}"; // the first Hardhat/Anvil development account`,
        `// BIP-39 test vector: ${'abandon '.repeat(11)}about`,
      ].join('\n'),
      'README.md': [
        'Set the key with `export PRIVATE_KEY=0x...` and the phrase with `MNEMONIC="word1 word2 ... word12"`.',
        'Run `curl -H "Authorization: Bearer $TOKEN" https://api.example.net` to check.',
        'Any twelve words from the list: ability able about above absent absorb abstract absurd abuse access accident account.',
      ].join('\n'),
    };
    const findings = Object.entries(files).flatMap(([path, text]) => scan(path, text));
    expect(findings.map((f) => `${f.path}:${f.line} ${f.rule_id}`)).toEqual([]);
  });
});

describe('keyword prefilter', () => {
  it('finds every keyword case-insensitively, at any position, and nothing else', async () => {
    const { KeywordMatcher } = await import('../../src/scan/keywords.js');
    const m = new KeywordMatcher(['pk', 'sg.', 'ghp_', 'twitter', 'kind: secret']);
    expect([...m.find('PK')]).toEqual(['pk']);
    expect([...m.find('x = SG.abc; TWITTER_KEY ghp_1')].sort()).toEqual(['ghp_', 'sg.', 'twitter']);
    expect([...m.find('kind: Secret\n')]).toEqual(['kind: secret']);
    expect([...m.find('twitte r, gh_p, s g.')]).toEqual([]);
  });
});
