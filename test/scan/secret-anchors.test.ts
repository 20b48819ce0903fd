import { describe, expect, it } from 'vitest';
import { lineIndex } from '../../src/scan/lines.js';
import { FORMAT_RULES, formatSample } from '../../src/scan/secret-formats.js';
import { SECRET_RULES } from '../../src/scan/secret-rules.js';
import { createSecretScanner } from '../../src/scan/secrets.js';
import {
  ALNUM,
  ANCHORED_SAMPLES,
  B64,
  CONTEXT_RULES,
  fresh,
  freshValue,
  freshValues,
} from './fresh-secrets.js';

const scanner = createSecretScanner();
const scan = (path: string, text: string) => scanner.scan(path, text, lineIndex(text));
const formatIds = new Set(FORMAT_RULES.map((r) => r.id));
const HAND_WRITTEN = SECRET_RULES.map((r) => r.id).filter((id) => !formatIds.has(id));

/**
 * Every rule that finds a token by the token itself, with fresh values of each variant: the
 * hand-written ones, and every format rule without `names` (one value per format).
 */
const ANCHORED: Record<string, () => string[]> = {
  ...Object.fromEntries(
    Object.entries(ANCHORED_SAMPLES).map(([id, make]) => [
      id,
      () => freshValues(make, SECRET_RULES.find((r) => r.id === id)!.entropy),
    ]),
  ),
  ...Object.fromEntries(
    FORMAT_RULES.filter((r) => !r.names).map((r) => [
      r.id,
      () => r.formats.map((format) => freshValue(() => formatSample(format), r.entropy)),
    ]),
  ),
};

/**
 * gitleaks' default rules (v8, config/gitleaks.toml) that match a token by its own prefix or shape,
 * with no variable named after the provider, and the rules here that do the same. Deliberately
 * not matched: `flutterwave-public-key` (a public key, meant to be published) and `jwt-base64` (a
 * JWT encoded once more in base64; the plain `jwt` rule is here).
 */
const GITLEAKS_BY_PREFIX: Record<string, string[]> = {
  '1password-secret-key': ['1password-secret-key'],
  '1password-service-account-token': ['1password-service-account-token'],
  'adobe-client-secret': ['adobe-client-secret'],
  'age-secret-key': ['age-secret-key'],
  'airtable-personnal-access-token': ['airtable-personal-access-token'],
  'alibaba-access-key-id': ['alibaba-access-key-id'],
  'anthropic-admin-api-key': ['anthropic-key'],
  'anthropic-api-key': ['anthropic-key'],
  'artifactory-api-key': ['artifactory-api-key'],
  'artifactory-reference-token': ['artifactory-reference-token'],
  'atlassian-api-token': ['atlassian-api-token'],
  'authress-service-client-access-key': ['authress-access-key'],
  'aws-access-token': ['aws-access-key-id'],
  'aws-amazon-bedrock-api-key-long-lived': ['aws-bedrock-api-key'],
  'aws-amazon-bedrock-api-key-short-lived': ['aws-bedrock-api-key'],
  'azure-ad-client-secret': ['azure-client-secret'],
  'clickhouse-cloud-api-secret-key': ['clickhouse-cloud-secret'],
  'clojars-api-token': ['clojars-token'],
  'cloudflare-origin-ca-key': ['cloudflare-origin-ca-key'],
  'databricks-api-token': ['databricks-token'],
  'digitalocean-access-token': ['digitalocean-token'],
  'digitalocean-pat': ['digitalocean-token'],
  'digitalocean-refresh-token': ['digitalocean-token'],
  'doppler-api-token': ['doppler-token'],
  'duffel-api-token': ['duffel-token'],
  'dynatrace-api-token': ['dynatrace-token'],
  'easypost-api-token': ['easypost-key'],
  'easypost-test-api-token': ['easypost-key'],
  'facebook-access-token': ['facebook-app-access-token'],
  'facebook-page-access-token': ['facebook-page-token'],
  'flutterwave-encryption-key': ['flutterwave-key'],
  'flutterwave-secret-key': ['flutterwave-key'],
  'flyio-access-token': ['flyio-token'],
  'frameio-api-token': ['frameio-token'],
  'gcp-api-key': ['gcp-api-key'],
  'github-app-token': ['github-token'],
  'github-fine-grained-pat': ['github-fine-grained-token'],
  'github-oauth': ['github-token'],
  'github-pat': ['github-token'],
  'github-refresh-token': ['github-token'],
  'gitlab-cicd-job-token': ['gitlab-other-token'],
  'gitlab-deploy-token': ['gitlab-other-token'],
  'gitlab-feature-flag-client-token': ['gitlab-other-token'],
  'gitlab-feed-token': ['gitlab-other-token'],
  'gitlab-incoming-mail-token': ['gitlab-other-token'],
  'gitlab-kubernetes-agent-token': ['gitlab-other-token'],
  'gitlab-oauth-app-secret': ['gitlab-other-token'],
  'gitlab-pat': ['gitlab-token'],
  'gitlab-pat-routable': ['gitlab-token'],
  'gitlab-ptt': ['gitlab-other-token'],
  'gitlab-rrt': ['gitlab-other-token'],
  'gitlab-runner-authentication-token': ['gitlab-other-token'],
  'gitlab-runner-authentication-token-routable': ['gitlab-other-token'],
  'gitlab-scim-token': ['gitlab-other-token'],
  'gitlab-session-cookie': ['gitlab-session-cookie'],
  'grafana-api-key': ['grafana-token'],
  'grafana-cloud-api-token': ['grafana-token'],
  'grafana-service-account-token': ['grafana-token'],
  'harness-api-key': ['harness-token'],
  'hashicorp-tf-api-token': ['terraform-cloud-token'],
  'heroku-api-key-v2': ['heroku-api-key-v2'],
  'huggingface-access-token': ['huggingface-token'],
  'huggingface-organization-api-token': ['huggingface-org-token'],
  'infracost-api-token': ['infracost-token'],
  'intra42-client-secret': ['intra42-secret'],
  jwt: ['jwt'],
  'linear-api-key': ['linear-api-key'],
  'maxmind-license-key': ['maxmind-license-key'],
  'microsoft-teams-webhook': ['microsoft-teams-webhook'],
  'notion-api-token': ['notion-token'],
  'npm-access-token': ['npm-token'],
  'octopus-deploy-api-key': ['octopus-deploy-key'],
  'openai-api-key': ['openai-key'],
  'openshift-user-token': ['openshift-token'],
  'perplexity-api-key': ['perplexity-key'],
  'planetscale-api-token': ['planetscale-token'],
  'planetscale-oauth-token': ['planetscale-token'],
  'planetscale-password': ['planetscale-token'],
  'postman-api-token': ['postman-key'],
  'prefect-api-token': ['prefect-key'],
  'private-key': ['private-key'],
  'pulumi-api-token': ['pulumi-token'],
  'pypi-upload-token': ['pypi-token'],
  'readme-api-token': ['readme-key'],
  'rubygems-api-token': ['rubygems-key'],
  'scalingo-api-token': ['scalingo-token'],
  'sendgrid-api-token': ['sendgrid-key'],
  'sendinblue-api-token': ['sendinblue-key'],
  'sentry-org-token': ['sentry-token'],
  'sentry-user-token': ['sentry-token'],
  'settlemint-application-access-token': ['settlemint-token'],
  'settlemint-personal-access-token': ['settlemint-token'],
  'settlemint-service-access-token': ['settlemint-token'],
  'shippo-api-token': ['shippo-token'],
  'shopify-access-token': ['shopify-token'],
  'shopify-custom-access-token': ['shopify-token'],
  'shopify-private-app-access-token': ['shopify-token'],
  'shopify-shared-secret': ['shopify-token'],
  'sidekiq-sensitive-url': ['sidekiq-credentials'],
  'slack-app-token': ['slack-app-token'],
  'slack-bot-token': ['slack-token'],
  'slack-config-access-token': ['slack-app-token'],
  'slack-config-refresh-token': ['slack-token'],
  'slack-legacy-bot-token': ['slack-token'],
  'slack-legacy-token': ['slack-token', 'slack-app-token'],
  'slack-legacy-workspace-token': ['slack-token'],
  'slack-user-token': ['slack-token'],
  'slack-webhook-url': ['slack-webhook'],
  'sourcegraph-access-token': ['sourcegraph-token'],
  'square-access-token': ['square-token'],
  'stripe-access-token': ['stripe-key'],
  'twilio-api-key': ['twilio-api-key'],
  'vault-batch-token': ['vault-token'],
  'vault-service-token': ['vault-token', 'vault-legacy-token'],
};

/** The file a bare value is put in: with a line naming the provider when the value holds no keyword. */
function bare(id: string, value: string, wrap: (v: string) => string): string {
  const keywords = SECRET_RULES.find((r) => r.id === id)!.keywords;
  const own = keywords.some((k) => value.toLowerCase().includes(k));
  return `${own ? '' : `# ${keywords[0]}\n`}${wrap(value)}\n`;
}

describe('secret rules against their anchor', () => {
  it('classifies every hand-written rule as anchored by its value or needing a context', () => {
    expect([...Object.keys(ANCHORED_SAMPLES), ...CONTEXT_RULES].sort()).toEqual([...HAND_WRITTEN].sort());
  });

  it('matches by prefix or shape alone every token gitleaks matches that way', () => {
    const ours = new Set(SECRET_RULES.map((r) => r.id));
    const mapped = Object.values(GITLEAKS_BY_PREFIX).flat();
    expect(mapped.filter((id) => !ours.has(id))).toEqual([]);
    expect(mapped.filter((id) => !ANCHORED[id])).toEqual([]);
  });

  // One test per anchored rule: each variant, freshly generated, bare on a line and as a string
  // under a name that says nothing about the provider.
  it.each(Object.keys(ANCHORED).sort())('%s finds fresh values standing alone', (id) => {
    for (const value of ANCHORED[id]!()) {
      for (const [path, wrap] of [
        ['notes/deploy.txt', (v: string) => v],
        ['src/settings.ts', (v: string) => `export const values = ['${v}'];`],
      ] as const) {
        const text = `deploy notes\n${bare(id, value, wrap)}`;
        const ids = scan(path, text).map((f) => f.rule_id);
        expect(ids, `${path}: ${value.slice(0, 12)}…`).toContain(id);
      }
    }
  });

  it('still needs the provider named for the tokens without a prefix of their own', () => {
    const named = FORMAT_RULES.filter((r) => r.names);
    for (const rule of named) {
      const value = freshValue(() => formatSample(rule.formats[0]!));
      const ids = scan('src/settings.ts', `export const values = ['${value}'];\n`).map((f) => f.rule_id);
      expect(ids, rule.id).not.toContain(rule.id);
    }
  });

  it('stays quiet on documented placeholders in a prefix format', () => {
    const text = [
      `ghp_${'x'.repeat(36)}`,
      `npm_${'X'.repeat(36)}`,
      'sk_live_xxxxxxxxxxxxxxxxxxxxxxxx',
      `SK${'0'.repeat(32)}`,
      `pat${'X'.repeat(14)}.${'0'.repeat(64)}`,
      `s.${'x'.repeat(24)}`,
      's.getElementsByTagNameNS(el)',
      'const n = s.addEventListener1234Option.length;',
      `hooks.slack.com/services/T00000000/B00000000/${'X'.repeat(24)}`,
      `CFPAT-${'your_token_here'.padEnd(43, '_')}`,
      `EAAA${'x'.repeat(60)}`,
      // A prefix inside base64 data (an embedded font or image) is data, not a token.
      `src: url(data:font/woff2;base64,${fresh(40, B64)}+EAAA${fresh(60, ALNUM)}+${fresh(40, B64)});`,
      `src: url(data:image/png;base64,${fresh(40, B64)}/ABSK${fresh(120, ALNUM)}+${fresh(40, B64)});`,
    ].join('\n');
    expect(scan('src/settings.ts', text).map((f) => `${f.line} ${f.rule_id}`)).toEqual([]);
  });
});
