import { randomInt } from 'node:crypto';
import type { Severity } from './types.js';

/**
 * Token formats written in a small notation, so one line gives both the rule's regex and a sample
 * for the tests: literal text, and `{cN}` / `{cN,M}` for N (to M) characters of class `c`:
 *
 *   h hex (lower)   H hex (any case)   d digits   a letters and digits   l lower-case letters and digits
 *   U upper-case letters and digits   L letters   w letters, digits, `_` and `-`   e `w` and `=`
 *   b base64 (letters, digits, `+`, `/`)
 *
 * The formats are public facts about each provider's credentials (the coverage reference is
 * gitleaks' default configuration, see docs/SCANNING.md); the notation and rules are ours.
 */
const CLASSES: Record<string, { regex: string; chars: string }> = {
  h: { regex: '0-9a-f', chars: '0123456789abcdef' },
  H: { regex: '0-9A-Fa-f', chars: '0123456789ABCDEFabcdef' },
  d: { regex: '0-9', chars: '0123456789' },
  a: { regex: 'A-Za-z0-9', chars: 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789' },
  l: { regex: 'a-z0-9', chars: 'abcdefghijklmnopqrstuvwxyz0123456789' },
  U: { regex: 'A-Z0-9', chars: 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789' },
  L: { regex: 'A-Za-z', chars: 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz' },
  w: { regex: 'A-Za-z0-9_-', chars: 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-' },
  e: { regex: 'A-Za-z0-9_=-', chars: 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-' },
  b: { regex: 'A-Za-z0-9+/', chars: 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/' },
};
const PART = /\{([hHdalULweb])(\d+)(?:,(\d+))?\}/g;

/** The regex source of a format (case-sensitive as written). */
export function formatRegex(format: string): string {
  let out = '';
  let at = 0;
  for (const m of format.matchAll(PART)) {
    out += format.slice(at, m.index).replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    const cls = CLASSES[m[1]!]!;
    out += `[${cls.regex}]{${m[2]}${m[3] ? `,${m[3]}` : ''}}`;
    at = m.index + m[0].length;
  }
  return out + format.slice(at).replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/**
 * A value in the format (tests only: no secret is stored). Without a seed it is fresh from
 * `crypto.randomInt`, a new value on every run; with one it comes from a seeded generator.
 */
export function formatSample(format: string, seed?: number): string {
  // mulberry32: small, seeded, and uniform enough that samples have a provider token's entropy.
  let state = (seed ?? 0) >>> 0;
  const seeded = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
  const pick = (n: number) => (seed === undefined ? randomInt(n) : seeded() % n);
  return format.replace(PART, (_, c: string, n: string, m?: string) => {
    const chars = CLASSES[c]!.chars;
    const length = seed === undefined && m ? Number(n) + randomInt(Number(m) - Number(n) + 1) : Number(n);
    let s = '';
    for (let i = 0; i < length; i++) s += chars[pick(chars.length)];
    return s;
  });
}

export interface FormatRule {
  id: string;
  description: string;
  /** Lower-case literals, at least one of which occurs wherever the secret does. */
  keywords: string[];
  /** Alternative formats of the secret itself. */
  formats: string[];
  /** When set, the value counts only after one of these names and an assignment (`name = value`). */
  names?: string[];
  entropy?: number;
  severity?: Severity;
}

// A value assigned to a name that contains a provider's name: the form of credentials without a
// recognisable prefix (`TWITTER_API_SECRET = "…"`, `"datadog_api_key": "…"`).
const named = (
  id: string,
  description: string,
  names: string[],
  formats: string[],
  entropy = 3,
): FormatRule => ({
  id,
  description,
  keywords: names.map((n) => n.toLowerCase()),
  names,
  formats,
  entropy,
});
// A token whose own prefix says what it is: found wherever it stands, bare or under any name.
const prefixed = (
  id: string,
  description: string,
  keywords: string[],
  formats: string[],
  entropy = 3,
  severity: Severity = 'HIGH',
): FormatRule => ({ id, description, keywords, formats, entropy, severity });
// A token of a distinctive shape without a prefix of its own, found wherever it stands in a file
// that names the provider (the keywords): `123456789012345|…` is a Facebook app token only there.
const nearby = prefixed;

const UUID = '{h8}-{h4}-{h4}-{h4}-{h12}';

export const FORMAT_RULES: FormatRule[] = [
  prefixed(
    '1password-secret-key',
    '1Password account secret key',
    ['a3-'],
    ['A3-{U6}-{U11}-{U5}-{U5}-{U5}', 'A3-{U6}-{U6}-{U5}-{U5}-{U5}-{U5}'],
    3.5,
    'CRITICAL',
  ),
  prefixed(
    '1password-service-account-token',
    '1Password service-account token',
    ['ops_eyj'],
    ['ops_eyJ{b250,2000}'],
    4,
    'CRITICAL',
  ),
  prefixed('adobe-client-secret', 'Adobe client secret', ['p8e-'], ['p8e-{a32}']),
  prefixed(
    'age-secret-key',
    'age encryption secret key',
    ['age-secret-key-1'],
    ['AGE-SECRET-KEY-1{U58}'],
    3,
    'CRITICAL',
  ),
  prefixed('alibaba-access-key-id', 'Alibaba Cloud AccessKey ID', ['ltai'], ['LTAI{a20}']),
  prefixed(
    'airtable-personal-access-token',
    'Airtable personal access token',
    ['pat'],
    ['pat{a14}.{h64}'],
    3.5,
  ),
  prefixed('artifactory-api-key', 'JFrog Artifactory API key', ['akcp'], ['AKCp{a69}'], 4.5),
  prefixed(
    'artifactory-reference-token',
    'JFrog Artifactory reference token',
    ['cmvmd'],
    ['cmVmd{a59}'],
    4.5,
  ),
  prefixed('atlassian-api-token', 'Atlassian API token', ['atatt3'], ['ATATT3{e186}']),
  prefixed(
    'authress-access-key',
    'Authress service client access key',
    ['.acc_', '.acc-'],
    ['sc', 'ext', 'scauth', 'authress'].flatMap((p) =>
      ['acc_', 'acc-'].map((a) => `${p}_{l5,30}.{l4,6}.${a}{l10,32}.{e30,120}`),
    ),
  ),
  prefixed(
    'aws-bedrock-api-key',
    'Amazon Bedrock API key',
    ['absk', 'bedrock-api-key-'],
    ['ABSK{b109,269}', 'bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t{b40,2000}'],
    3.5,
    'CRITICAL',
  ),
  prefixed('clickhouse-cloud-secret', 'ClickHouse Cloud API secret key', ['4b1d'], ['4b1d{a38}']),
  prefixed('clojars-token', 'Clojars deploy token', ['clojars_'], ['CLOJARS_{l60}']),
  prefixed('cloudflare-origin-ca-key', 'Cloudflare Origin CA key', ['v1.0-'], ['v1.0-{h24}-{h146}']),
  prefixed(
    'contentful-personal-access-token',
    'Contentful personal access token',
    ['cfpat-'],
    ['CFPAT-{w43}'],
  ),
  prefixed('databricks-token', 'Databricks API token', ['dapi'], ['dapi{h32}', 'dapi{h32}-{d1}']),
  prefixed('defined-networking-token', 'Defined Networking API token', ['dnkey-'], ['dnkey-{e26}-{e52}']),
  prefixed(
    'digitalocean-token',
    'DigitalOcean token',
    ['dop_v1_', 'doo_v1_', 'dor_v1_'],
    ['dop_v1_{h64}', 'doo_v1_{h64}', 'dor_v1_{h64}'],
    3,
    'CRITICAL',
  ),
  prefixed(
    'doppler-token',
    'Doppler token',
    ['dp.pt.', 'dp.st.', 'dp.sa.', 'dp.ct.', 'dp.scim.', 'dp.audit.'],
    ['dp.pt.{a43}', 'dp.st.{a43}', 'dp.sa.{a43}', 'dp.ct.{a43}', 'dp.scim.{a43}', 'dp.audit.{a43}'],
  ),
  prefixed('duffel-token', 'Duffel API token', ['duffel_'], ['duffel_live_{e43}', 'duffel_test_{e43}']),
  prefixed('dynatrace-token', 'Dynatrace API token', ['dt0c01.'], ['dt0c01.{U24}.{a64}'], 4),
  prefixed('easypost-key', 'EasyPost API key', ['ezak', 'eztk'], ['EZAK{a54}', 'EZTK{a54}']),
  prefixed(
    'facebook-page-token',
    'Facebook page access token',
    ['eaam', 'eaac'],
    ['EAAM{a100,400}', 'EAAC{a100,400}'],
    4,
  ),
  nearby(
    'facebook-app-access-token',
    'Facebook app access token (app id and secret)',
    ['facebook'],
    ['{d15,16}|{w27,40}', '{d15,16}%7C{w27,40}'],
  ),
  prefixed(
    'flutterwave-key',
    'Flutterwave key',
    ['flwseck', 'flwpubk'],
    ['FLWSECK_TEST-{h32}-X', 'FLWSECK-{h32}-X', 'FLWSECK_TEST-{h12}'],
  ),
  prefixed(
    'flyio-token',
    'Fly.io access token',
    ['fo1_', 'fm1a_', 'fm1r_', 'fm2_'],
    ['fo1_{w43}', 'fm1a_{b100,2000}', 'fm1r_{b100,2000}', 'fm2_{b100,2000}'],
    4,
  ),
  prefixed('frameio-token', 'Frame.io API token', ['fio-u-'], ['fio-u-{e64}']),
  prefixed(
    'gitlab-other-token',
    'GitLab deploy, runner, trigger, feed, agent or OAuth token',
    [
      'glcbt-',
      'gldt-',
      'glffct-',
      'glft-',
      'glimt-',
      'glagent-',
      'gloas-',
      'glptt-',
      'gr1348941',
      'glrt-',
      'glsoat-',
    ],
    [
      'glcbt-{a1,5}_{w20}',
      'gldt-{w20}',
      'glffct-{w20}',
      'glft-{w20}',
      'glimt-{w25}',
      'glagent-{w50}',
      'gloas-{w64}',
      'glptt-{h40}',
      'GR1348941{w20}',
      'glrt-{w20,320}',
      'glsoat-{w20}',
    ],
    3,
    'CRITICAL',
  ),
  prefixed('gitlab-session-cookie', 'GitLab session cookie', ['_gitlab_session='], ['_gitlab_session={l32}']),
  prefixed(
    'grafana-token',
    'Grafana API key or token',
    ['eyjrijoi', 'glc_', 'glsa_'],
    ['eyJrIjoi{a70,400}', 'glc_{b32,400}', 'glsa_{a32}_{H8}'],
  ),
  prefixed(
    'harness-token',
    'Harness access token',
    ['pat.', 'sat.'],
    ['pat.{w22}.{a24}.{a20}', 'sat.{w22}.{a24}.{a20}'],
  ),
  prefixed(
    'terraform-cloud-token',
    'Terraform Cloud / HashiCorp API token',
    ['atlasv1'],
    ['{l14}.atlasv1.{e60,70}'],
    3.5,
    'CRITICAL',
  ),
  prefixed(
    'hubspot-private-app-token',
    'HubSpot private app access token',
    ['pat-'],
    ['pat-{l2,3}-{h8}-{h4}-{h4}-{h4}-{h12}'],
  ),
  prefixed('heroku-api-key-v2', 'Heroku API key', ['hrku-aa'], ['HRKU-AA{w58}'], 4, 'CRITICAL'),
  prefixed('huggingface-org-token', 'Hugging Face organisation token', ['api_org_'], ['api_org_{L34}']),
  prefixed('infracost-token', 'Infracost API token', ['ico-'], ['ico-{a32}']),
  prefixed('intra42-secret', '42 Intra client secret', ['s-s4t2'], ['s-s4t2ud-{h64}', 's-s4t2af-{h64}']),
  prefixed('linear-api-key', 'Linear API key', ['lin_api_'], ['lin_api_{a40}']),
  prefixed(
    'mapbox-secret-token',
    'Mapbox secret access token',
    ['sk.eyj1ijoi'],
    ['sk.eyJ1Ijoi{w20,300}.{w22}'],
  ),
  prefixed('maxmind-license-key', 'MaxMind licence key', ['_mmk'], ['{a6}_{a29}_mmk'], 4),
  prefixed(
    'new-relic-key',
    'New Relic key',
    ['nrak-', 'nrii-', 'nrjs-'],
    ['NRAK-{U27}', 'NRII-{w32}', 'NRJS-{h19}'],
  ),
  prefixed('netlify-personal-access-token', 'Netlify personal access token', ['nfp_'], ['nfp_{a36,40}']),
  prefixed('notion-token', 'Notion integration token', ['ntn_'], ['ntn_{d11}{a35}'], 4),
  prefixed('octopus-deploy-key', 'Octopus Deploy API key', ['api-'], ['API-{U26}']),
  prefixed('openshift-token', 'OpenShift user token', ['sha256~'], ['sha256~{w43}'], 3.5),
  prefixed('perplexity-key', 'Perplexity API key', ['pplx-'], ['pplx-{a48}'], 4),
  prefixed(
    'plaid-access-token',
    'Plaid production or development access token',
    ['access-production-', 'access-development-'],
    [`access-production-${UUID}`, `access-development-${UUID}`],
  ),
  prefixed(
    'planetscale-token',
    'PlanetScale token or password',
    ['pscale_'],
    ['pscale_tkn_{e32,64}', 'pscale_oauth_{e32,64}', 'pscale_pw_{e32,64}'],
    3,
    'CRITICAL',
  ),
  prefixed('postman-key', 'Postman API key', ['pmak-'], ['PMAK-{h24}-{h34}']),
  prefixed('prefect-key', 'Prefect API key', ['pnu_'], ['pnu_{a36}']),
  prefixed('pulumi-token', 'Pulumi access token', ['pul-'], ['pul-{h40}']),
  prefixed('readme-key', 'ReadMe API key', ['rdme_'], ['rdme_{l70}']),
  prefixed('rubygems-key', 'RubyGems API key', ['rubygems_'], ['rubygems_{h48}'], 3, 'CRITICAL'),
  prefixed('scalingo-token', 'Scalingo API token', ['tk-us-'], ['tk-us-{w48}']),
  prefixed('sendinblue-key', 'Brevo (Sendinblue) API key', ['xkeysib-'], ['xkeysib-{h64}-{a16}']),
  prefixed(
    'sentry-token',
    'Sentry user or organisation token',
    ['sntryu_', 'sntrys_'],
    ['sntryu_{h64}', 'sntrys_eyJpYXQiO{b20,400}_{b43}'],
    3.5,
  ),
  prefixed(
    'settlemint-token',
    'SettleMint access token',
    ['sm_aat_', 'sm_pat_', 'sm_sat_'],
    ['sm_aat_{a16}', 'sm_pat_{a16}', 'sm_sat_{a16}'],
  ),
  prefixed('shippo-token', 'Shippo API token', ['shippo_'], ['shippo_live_{H40}', 'shippo_test_{H40}']),
  prefixed(
    'shopify-token',
    'Shopify access token or shared secret',
    ['shpat_', 'shpca_', 'shppa_', 'shpss_'],
    ['shpat_{H32}', 'shpca_{H32}', 'shppa_{H32}', 'shpss_{H32}'],
    3,
    'CRITICAL',
  ),
  prefixed(
    'sidekiq-credentials',
    'Sidekiq Pro/Enterprise gem credentials',
    ['contribsys.com'],
    ['https://{h8}:{h8}@gems.contribsys.com', 'https://{h8}:{h8}@enterprise.contribsys.com'],
    2.5,
  ),
  prefixed(
    'slack-app-token',
    'Slack app-level or configuration token',
    ['xapp-', 'xoxe.xox', 'xoxo-'],
    [
      'xapp-{d1}-{U9,12}-{d10,13}-{l40,64}',
      'xoxe.xoxp-{d1}-{U163,166}',
      'xoxe.xoxb-{d1}-{U163,166}',
      'xoxo-{d6,14}-{d6,14}-{d6,14}-{H16,64}',
    ],
  ),
  prefixed(
    'sonarqube-token',
    'SonarQube / SonarCloud user, project or analysis token',
    ['sqp_', 'squ_', 'sqa_'],
    ['sqp_{h40}', 'squ_{h40}', 'sqa_{h40}'],
  ),
  prefixed(
    'sourcegraph-token',
    'Sourcegraph access token',
    ['sgp_'],
    ['sgp_{h16}_{h40}', 'sgp_local_{h40}', 'sgp_{h40}'],
  ),
  prefixed(
    'square-token',
    'Square access token or secret',
    ['sq0atp-', 'sq0csp-', 'eaaa'],
    ['sq0atp-{w22,60}', 'sq0csp-{w40,60}', 'EAAA{w60}'],
    3,
    'CRITICAL',
  ),
  prefixed('twilio-api-key', 'Twilio API key SID', ['sk'], ['SK{H32}']),
  prefixed('typeform-token', 'Typeform personal token', ['tfp_'], ['tfp_{e59}']),
  prefixed(
    'vault-token',
    'HashiCorp Vault service or batch token',
    ['hvs.', 'hvb.'],
    ['hvs.{w90,120}', 'hvb.{w138,300}'],
    4,
    'CRITICAL',
  ),
  prefixed(
    'microsoft-teams-webhook',
    'Microsoft Teams incoming webhook URL',
    ['webhook.office.com'],
    [`https://{l6,20}.webhook.office.com/webhookb2/${UUID}@${UUID}/IncomingWebhook/{l32}/${UUID}`],
  ),

  named('adafruit-key', 'Adafruit IO key', ['adafruit'], ['{w32}']),
  named('adobe-client-id', 'Adobe client ID', ['adobe'], ['{h32}']),
  named('airtable-key', 'Airtable API key (legacy)', ['airtable'], ['key{a14}']),
  named('algolia-key', 'Algolia API key', ['algolia'], ['{l32}']),
  named('alibaba-secret-key', 'Alibaba Cloud AccessKey secret', ['alibaba'], ['{a30}']),
  named('asana-secret', 'Asana client secret or token', ['asana'], ['{l32}', '{d1}/{d16}:{h32}']),
  named(
    'atlassian-token',
    'Atlassian (Jira, Confluence) API token',
    ['atlassian', 'confluence', 'jira'],
    ['{a24}'],
  ),
  named('beamer-token', 'Beamer API key', ['beamer'], ['b_{e44}']),
  named('bitbucket-secret', 'Bitbucket client secret', ['bitbucket'], ['{e64}', '{a32}']),
  named('bittrex-key', 'Bittrex API key or secret', ['bittrex'], ['{l32}']),
  named('cisco-meraki-key', 'Cisco Meraki API key', ['meraki'], ['{h40}']),
  named('cloudflare-api-key', 'Cloudflare API token or global key', ['cloudflare'], ['{w40}', '{h37}']),
  named('codecov-token', 'Codecov upload token', ['codecov'], ['{l32}', UUID]),
  named('cohere-key', 'Cohere API key', ['cohere', 'co_api_key'], ['{a40}'], 3.5),
  named('coinbase-key', 'Coinbase API key or secret', ['coinbase'], ['{w64}', '{a16}', '{b88}']),
  named('confluent-key', 'Confluent Cloud API key or secret', ['confluent'], ['{b64}', '{U16}']),
  named('contentful-token', 'Contentful delivery or preview API token', ['contentful'], ['{e43}']),
  named(
    'datadog-key',
    'Datadog API or application key',
    ['datadog', 'dd_api_key', 'dd_app_key'],
    ['{h32}', '{h40}'],
  ),
  named(
    'discord-secret',
    'Discord bot token or client secret',
    ['discord'],
    ['{h64}', '{w32}', '{w24,26}.{w6}.{w27,38}'],
  ),
  named('droneci-token', 'Drone CI token', ['droneci', 'drone_token'], ['{a32}']),
  named(
    'dropbox-token',
    'Dropbox API token',
    ['dropbox'],
    ['sl.{e135,1400}', '{a11}AAAAAAAAAA{e43}', '{l15}'],
  ),
  named('etsy-key', 'Etsy API key', ['etsy'], ['{l24}']),
  named('facebook-secret', 'Facebook app secret', ['facebook', 'fb_app_secret'], ['{h32}']),
  named('fastly-token', 'Fastly API token', ['fastly'], ['{e32}']),
  named('finicity-secret', 'Finicity API token or client secret', ['finicity'], ['{h32}', '{a20}']),
  named('finnhub-token', 'Finnhub API token', ['finnhub'], ['{l20}']),
  named('flickr-token', 'Flickr API key or secret', ['flickr'], ['{l32}', '{h16}']),
  named('freshbooks-token', 'FreshBooks access token', ['freshbooks'], ['{l64}']),
  named('gitter-token', 'Gitter access token', ['gitter'], ['{w40}']),
  named('gocardless-token', 'GoCardless access token', ['gocardless'], ['live_{e40}', 'sandbox_{e40}']),
  named('heroku-api-key', 'Heroku API key', ['heroku'], [UUID]),
  named('hubspot-key', 'HubSpot API key (legacy)', ['hubspot'], [UUID]),
  named('intercom-token', 'Intercom access token', ['intercom'], ['{e60}']),
  named(
    'jfrog-key',
    'JFrog API key or identity token',
    ['jfrog', 'artifactory', 'bintray', 'xray'],
    ['{l73}', '{l64}'],
  ),
  named('kraken-key', 'Kraken API key or private key', ['kraken'], ['{b56}', '{b86,90}']),
  named('kucoin-key', 'KuCoin API key or secret', ['kucoin'], ['{h24}', UUID]),
  named(
    'launchdarkly-key',
    'LaunchDarkly SDK or API key',
    ['launchdarkly'],
    ['api-{h8}-{h4}-{h4}-{h4}-{h12}', 'sdk-{h8}-{h4}-{h4}-{h4}-{h12}', '{e40}'],
  ),
  named('linear-client-secret', 'Linear OAuth client secret', ['linear'], ['{h32}']),
  named(
    'linkedin-secret',
    'LinkedIn client ID or secret',
    ['linkedin', 'linked_in', 'linked-in'],
    ['{l16}', '{l14}'],
  ),
  named(
    'lob-key',
    'Lob API key',
    ['lob_', 'lob-', 'lob.'],
    ['live_{h35}', 'test_{h35}', 'live_pub_{h31}', 'test_pub_{h31}'],
  ),
  named('mailchimp-key', 'Mailchimp API key', ['mailchimp'], ['{h32}-us{d1,2}']),
  named(
    'mailgun-key',
    'Mailgun API or signing key',
    ['mailgun'],
    ['key-{h32}', 'pubkey-{h32}', '{h32}-{h8}-{h8}'],
  ),
  named('mapbox-token', 'Mapbox access token', ['mapbox'], ['pk.{a60,100}.{w22}']),
  named('mattermost-token', 'Mattermost access token', ['mattermost'], ['{l26}']),
  named(
    'messagebird-key',
    'MessageBird API key',
    ['messagebird', 'message_bird', 'message-bird'],
    ['{a25}', UUID],
  ),
  named('netlify-token', 'Netlify access token', ['netlify'], ['{e40,46}']),
  named(
    'new-relic-api-key',
    'New Relic user API key',
    ['newrelic', 'new_relic', 'new-relic'],
    ['{l64}', '{h40}'],
  ),
  named('nytimes-key', 'New York Times API key', ['nytimes', 'newyorktimes'], ['{e32}']),
  named('okta-token', 'Okta API token', ['okta'], ['00{e40}'], 4),
  named(
    'plaid-secret',
    'Plaid secret, client ID or sandbox access token',
    ['plaid'],
    [`access-sandbox-${UUID}`, '{l30}', '{l24}'],
    3.5,
  ),
  named('privateai-key', 'Private AI API key', ['privateai', 'private_ai', 'private-ai'], ['{l32}']),
  named('rapidapi-key', 'RapidAPI key', ['rapidapi'], ['{w50}']),
  named('sendbird-token', 'Sendbird API token', ['sendbird'], ['{h40}', UUID]),
  named('sentry-legacy-token', 'Sentry auth token (legacy)', ['sentry'], ['{h64}']),
  named('snyk-token', 'Snyk API token', ['snyk'], [UUID]),
  named('sonar-token', 'SonarQube / SonarCloud token (legacy)', ['sonar'], ['{e40}']),
  named('squarespace-key', 'Squarespace API key', ['squarespace'], [UUID]),
  named('sumologic-key', 'Sumo Logic access ID or key', ['sumo'], ['su{a12}', '{a64}']),
  named('travisci-token', 'Travis CI access token', ['travis'], ['{w22}']),
  named('twilio-key', 'Twilio account SID or auth token', ['twilio'], ['AC{h32}', '{h32}']),
  named('twitch-token', 'Twitch API token', ['twitch'], ['{l30}']),
  named(
    'twitter-secret',
    'X (Twitter) API key, secret or token',
    ['twitter', 'x_api'],
    ['{a25}', '{a45}', '{a50}', '{d15,25}-{a20,40}', 'AAAAAAAAAAAAAAAAAAAAA{a80,112}'],
  ),
  named(
    'yandex-key',
    'Yandex API key or token',
    ['yandex'],
    ['AQVN{w35,38}', 'YC{w38}', 't1.{w10,200}.{w86}'],
  ),
  named('zendesk-key', 'Zendesk API token', ['zendesk'], ['{a40}']),
];
