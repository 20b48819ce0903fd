import { english, generateMnemonic } from 'viem/accounts';
import { ALNUM, DIGITS, LOWER, randomChars, UPPER } from '../fixtures/git-repo.js';

/**
 * One true positive and one false positive per secret rule. Values are assembled at run time from
 * pseudo-random characters, so the repository holds no secret-shaped strings.
 */
export const SECRET_SAMPLES: Record<string, { positive: string; negative: string }> = {
  'private-key': {
    positive: `-----BEGIN RSA ${'PRIVATE'} KEY-----\n${Array.from({ length: 6 }, (_, i) => randomChars(64, `${ALNUM}+/`, i + 7)).join('\n')}\n-----END RSA ${'PRIVATE'} KEY-----`,
    negative: `-----BEGIN ${'PRIVATE'} KEY-----\n...\n-----END ${'PRIVATE'} KEY-----`,
  },
  'aws-access-key-id': {
    positive: `${'AK'}IA${randomChars(16, `${UPPER}234567`, 2)}`,
    negative: `${'AK'}IAIOSFODNN7EXAMPLE`,
  },
  'aws-secret-access-key': {
    positive: `aws_secret_access_key = ${randomChars(40, `${ALNUM}/+`, 3)}`,
    negative: 'aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  },
  'gcp-api-key': {
    positive: `${'AI'}za${randomChars(35, `${ALNUM}_-`, 4)}`,
    negative: `${'AI'}za${'x'.repeat(35)}`,
  },
  'gcp-service-account': {
    positive: `{"type": "service_account", "project_id": "p1", "private_key_id": "${randomChars(40, '0123456789abcdef', 5)}"}`,
    negative: '{"type": "service_account", "private_key_id": "0123456789abcdef0123456789abcdef01234567"}',
  },
  'azure-storage-key': {
    positive: `DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=${randomChars(86, `${ALNUM}+/`, 6)}==`,
    negative: `AccountKey=${'yourStorageAccountKeyHere'.repeat(4).slice(0, 86)}==`,
  },
  'azure-client-secret': {
    positive: `client_secret_value: ${randomChars(3, ALNUM, 7)}8Q~${randomChars(34, `${ALNUM}_~.-`, 8)}`,
    negative: `value: abc8Q~${'a'.repeat(34)}`,
  },
  'github-token': {
    positive: `gh${'p'}_${randomChars(36, ALNUM, 9)}`,
    negative: `gh${'p'}_${'x'.repeat(36)}`,
  },
  'github-fine-grained-token': {
    positive: `github_${'pat'}_${randomChars(82, `${ALNUM}_`, 10)}`,
    negative: `github_${'pat'}_your_token_here`,
  },
  'gitlab-token': {
    positive: `gl${'pat'}-${randomChars(20, `${ALNUM}_-`, 11)}`,
    negative: `gl${'pat'}-${'x'.repeat(20)}`,
  },
  'npm-token': { positive: `np${'m'}_${randomChars(36, ALNUM, 12)}`, negative: `np${'m'}_${'X'.repeat(36)}` },
  'pypi-token': {
    positive: `pypi-AgEIcHlwaS5vcmc${randomChars(60, `${ALNUM}_-`, 13)}`,
    negative: `pypi-AgEIcHlwaS5vcmc${'x'.repeat(60)}`,
  },
  'stripe-key': {
    positive: `sk_${'live'}_${randomChars(24, ALNUM, 14)}`,
    negative: `sk_${'test'}_${'x'.repeat(24)}`,
  },
  'slack-token': {
    positive: `xo${'xb'}-${randomChars(12, DIGITS, 15)}-${randomChars(13, DIGITS, 16)}-${randomChars(24, ALNUM, 17)}`,
    negative: `xo${'xb'}-your-token-goes-here-please`,
  },
  'slack-webhook': {
    positive: `https://hooks.slack.com/services/T${randomChars(8, UPPER, 18)}/B${randomChars(8, UPPER, 19)}/${randomChars(24, ALNUM, 20)}`,
    negative: `https://hooks.slack.com/services/T00000000/B00000000/${'X'.repeat(24)}`,
  },
  'discord-webhook': {
    positive: `https://discord.com/api/webhooks/${randomChars(18, DIGITS, 21)}/${randomChars(68, `${ALNUM}_-`, 22)}`,
    negative: `https://discord.com/api/webhooks/123/${'x'.repeat(68)}`,
  },
  'telegram-bot-token': {
    positive: `${randomChars(9, DIGITS, 23)}:AA${randomChars(33, `${ALNUM}_-`, 24)}`,
    negative: `123456789:AA${'x'.repeat(33)}`,
  },
  'sendgrid-key': {
    positive: `SG.${randomChars(22, `${ALNUM}_-`, 25)}.${randomChars(43, `${ALNUM}_-`, 26)}`,
    negative: `SG.${'x'.repeat(22)}.${'x'.repeat(43)}`,
  },
  'openai-key': {
    positive: `sk-${'proj'}-${randomChars(48, `${ALNUM}_-`, 27)}`,
    negative: `sk-${'proj'}-your-openai-api-key-goes-here-0000000000000`,
  },
  'anthropic-key': {
    positive: `sk-${'ant'}-api03-${randomChars(93, `${ALNUM}_-`, 28)}AA`,
    negative: `sk-${'ant'}-api03-${'x'.repeat(90)}`,
  },
  'huggingface-token': {
    positive: `h${'f'}_${randomChars(34, UPPER + LOWER, 29)}`,
    negative: `h${'f'}_${'a'.repeat(34)}`,
  },
  'groq-key': { positive: `gs${'k'}_${randomChars(52, ALNUM, 30)}`, negative: `gs${'k'}_${'x'.repeat(52)}` },
  'vault-legacy-token': {
    positive: `VAULT_ADDR=https://vault.internal:8200 vault login ${'s'}.${randomChars(24, ALNUM, 45)}`,
    negative: 'const n = s.getElementsByTagNameNS(ns, tag).length + s.toString().length;',
  },
  jwt: {
    positive: `${'eyJ'}hbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.${'eyJ'}zdWIiOiIxMjM0NTY3ODkwIiwiaWF0IjoxNzAwMDAwMDAwfQ.${randomChars(43, `${ALNUM}_-`, 31)}`,
    negative: 'eyJ is how a base64 JSON object starts',
  },
  'database-url-password': {
    positive: `DATABASE_URL=postgres://app:${randomChars(20, ALNUM, 32)}@db.internal:5432/app`,
    negative: 'DATABASE_URL=postgres://postgres:postgres@localhost:5432/app',
  },
  'curl-auth-header': {
    positive: `curl -H "Authorization: Bearer ${randomChars(40, `${ALNUM}_-`, 34)}" https://api.example.net/v1`,
    negative: 'curl -H "Authorization: Bearer $API_TOKEN" https://api.example.net/v1',
  },
  'curl-auth-user': {
    positive: `curl -u deploy:${randomChars(20, ALNUM, 35)} https://ci.internal/job`,
    negative: 'curl -u "$USER:$PASSWORD" https://ci.internal/job',
  },
  'kubernetes-secret': {
    positive: `apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\ndata:\n  password: ${Buffer.from(randomChars(24, ALNUM, 36)).toString('base64')}\n`,
    negative:
      'apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\ndata:\n  password: {{ .Values.password }}\n',
  },
  'nuget-config-password': {
    positive: `<add key="ClearTextPassword" value="${randomChars(20, ALNUM, 37)}" />`,
    negative: '<add key="ClearTextPassword" value="%NUGET_PASSWORD%" />',
  },
  'evm-private-key': {
    positive: `PRIVATE_KEY=0x${randomChars(64, '0123456789abcdef', 38)}`,
    negative: `const blockHash = '0x${randomChars(64, '0123456789abcdef', 38)}';`,
  },
  'bip39-seed-phrase': {
    positive: `MNEMONIC="${generateMnemonic(english)}"`,
    negative: `MNEMONIC="${'test '.repeat(11)}junk"`,
  },
  'keystore-json': {
    positive: JSON.stringify({
      version: 3,
      address: randomChars(40, '0123456789abcdef', 39),
      crypto: {
        cipher: 'aes-128-ctr',
        ciphertext: randomChars(64, '0123456789abcdef', 40),
        cipherparams: { iv: randomChars(32, '0123456789abcdef', 41) },
        kdf: 'scrypt',
        kdfparams: { dklen: 32, n: 262144, p: 1, r: 8, salt: randomChars(64, '0123456789abcdef', 42) },
        mac: randomChars(64, '0123456789abcdef', 43),
      },
    }),
    negative: `{"algorithm": "aes-256-gcm", "ciphertext": "${randomChars(64, '0123456789abcdef', 44)}"}`,
  },
  'generic-secret-assignment': {
    positive: `API_KEY = "${randomChars(32, ALNUM, 33)}"`,
    negative: `API_KEY = "${'$'}{process.env.API_KEY}"`,
  },
};
