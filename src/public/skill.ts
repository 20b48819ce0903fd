import { createHash } from 'node:crypto';
import { z } from 'zod';
import { KEYS_PATH } from '../attestations/urls.js';
import type { PaymentsConfig } from '../config.js';
import type { App, AppContext } from '../context.js';
import { FAUCET_GRANT_MICRO, FAUCET_GRANTS_PER_ADDRESS } from '../devnet/faucet.js';
import { DEVNET_NOTE } from '../devnet/routes.js';
import { DEVNET_TOKEN_DOMAIN } from '../devnet/token-domain.js';
import { VERSIONS_SOLD } from '../platform/errors.js';
import { SKILL_NAME, SKILL_PATH } from '../platform/http/discovery-links.js';
import { prebuilt, sendPrebuilt } from '../platform/http/prebuilt.js';
import { errorResponses } from '../platform/http/schemas.js';
import { formatUsd } from '../platform/money/usd.js';
import { BASE, type PaymentNetwork } from '../platform/networks.js';
import { EXAMPLE_PRICE_MICRO, EXAMPLE_PRICE_USD } from './example-price.js';
import { verificationScript } from './verification-script.js';

/**
 * The buy procedure as an Agent Skill (SKILL.md with YAML front matter), and the draft well-known
 * index that lists it with its digest, so an agent with no human in the loop can learn to buy.
 */

export const SKILL_INDEX_PATH = '/.well-known/agent-skills/index.json';

/** What the texts below need of the payments settings: test money or not, and the network paid on. */
export type PaymentsSetting = Pick<PaymentsConfig, 'mode' | 'network'>;

const description = (network: PaymentNetwork) =>
  `Buy, download and re-fetch private code listed on repo402: read the free manifest, pay a listing in USDC on ${network.name} over HTTP 402 (x402 v2, exact scheme), download the zip, and fetch owned versions again for free.`;

const SkillIndexSchema = z
  .object({
    $schema: z.string(),
    skills: z.array(
      z.object({
        name: z.string(),
        type: z.string(),
        description: z.string(),
        url: z.string(),
        digest: z.string(),
      }),
    ),
  })
  .meta({ id: 'AgentSkillsIndex' });

/**
 * The one complete buying program for the official x402 client, as SKILL.md and /docs/buying show
 * it, set up for the example price. test/purchases/official-client.test.ts runs this very text, as
 * each document serves it, against listings priced above $1.
 */
export function buyingSnippet(baseUrl: string, network: PaymentNetwork): string {
  return `// npm install @x402/fetch @x402/evm viem   (Node 20+; run as an ES module, e.g. npx tsx buy.ts)
import { createHash } from 'node:crypto';
import { wrapFetchWithPaymentFromConfig } from '@x402/fetch';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { privateKeyToAccount } from 'viem/accounts';

// The client refuses any payment above $1.00 unless told otherwise: set this to at least the
// price on sale (the manifest's price_micro / 1,000,000 dollars; the 402's extra.instructions name it).
const MAX_PER_PAYMENT = '${EXAMPLE_PRICE_USD}';

const account = privateKeyToAccount(process.env.PRIVATE_KEY as \`0x\${string}\`);
// ?address= names your wallet: the grant then carries wallet_challenge, signed for your next call.
const RESOURCE = \`${baseUrl}/api/r/<owner>/<slug>?address=\${account.address}\`;
const pay = wrapFetchWithPaymentFromConfig(fetch, {
  schemes: [{ network: '${network.caip2}', client: new ExactEvmScheme(account) }],
  spendControls: { maxAmountPerPayment: MAX_PER_PAYMENT },
});
const response = await pay(RESOURCE);
if (!response.ok) throw new Error(\`\${response.status}: \${await response.text()}\`);
const grant = await response.json(); // { download_url (5 minutes), version, artifact_sha256, kind, transaction, attestation_url, wallet_challenge, ... }
const zip = Buffer.from(await (await fetch(grant.download_url)).arrayBuffer());
if (createHash('sha256').update(zip).digest('hex') !== grant.artifact_sha256) throw new Error('checksum mismatch');
console.log(grant.kind, grant.version, grant.transaction, zip.length);`;
}

export function skillMarkdown(baseUrl: string, payments: PaymentsSetting): string {
  const { network } = payments;
  return `---
name: ${SKILL_NAME}
description: ${JSON.stringify(description(network))}
license: CC0-1.0
metadata:
  service: repo402
  base_url: ${JSON.stringify(baseUrl)}
---

# Buy a repository on repo402

repo402 sells private git repositories as versioned zip artifacts. A listing is addressed as
\`<owner>/<slug>\`. Paying is HTTP 402 (x402 version 2, scheme \`exact\`) in USDC on ${network.name}
(network \`${network.caip2}\`). A 402 here is a paywall, not an error. Amounts are micro-USDC
(6 decimals) as decimal strings: \`"${EXAMPLE_PRICE_MICRO}"\` is ${formatUsd(EXAMPLE_PRICE_MICRO)} USD.

Base URL: ${baseUrl}

**Latest** means the version on sale: the newest release (highest \`X.Y.Z\`) whose security scan
passed. ${VERSIONS_SOLD} Every release, also ones that failed their scan or are pending (never sold), is in the
release log: \`GET ${baseUrl}/api/v/<owner>/<slug>/releases\` (newest first, paged by
\`next_cursor\`; each entry has its changelog, \`diff_summary\`, \`scan\` verdict and prices). The
manifest's \`release_log\` and version status's \`release_log_url\` link it.

${testMoneySection(baseUrl, payments)}## 1. Read the free manifest

\`GET ${baseUrl}/api/label/<owner>/<slug>\` returns the manifest: \`version\`, \`price_micro\`,
\`update_price_micro\` (\`"0"\` means updates are included), \`artifact_sha256\`, and two namespaces:
\`computed\` (what repo402 measured: file tree, languages, dependencies, licence, the security scan
with its verdict and capabilities) and \`self_reported\` (the creator's description and trigger hint).
Decide from \`computed\`; treat \`self_reported\` as the seller's words.

## 2. Ask for the resource and get the price

\`GET ${baseUrl}/api/r/<owner>/<slug>\` without payment answers \`402\`. The same payment-required
body is in the JSON body and, base64-encoded, in the \`PAYMENT-REQUIRED\` header:

- \`accepts[0]\`: what to sign: \`scheme\` \`exact\`, \`network\` \`${network.caip2}\`, \`asset\` (the USDC
  contract), \`payTo\`, \`amount\` (micro-USDC), \`maxTimeoutSeconds\`, \`extra\` (the token's EIP-712
  domain \`name\` and \`version\`).
- \`extra.kind\`: \`new\` for a first purchase, \`update\` if your wallet holds an earlier version
  (then \`extra.from\`, \`extra.to\` and \`extra.releases\` describe what changed).
- \`extra.quote_id\` (the top-level \`extra\`, beside \`accepts\`): send it back as the \`X-Quote-Id\` header when you pay.
- \`extra.valid_before\`: the quote's expiry.

A free listing (price \`"0"\`) answers \`200\` with the download at once.

**If your wallet may already hold the version on sale** (you bought it before, or bought while
updates were included), send \`X-Wallet-Signature\` (section 4) with this first request:

- you hold the version on sale: \`200\` at once with a grant of \`kind: "owned"\`, free, no 402,
  nothing to sign or pay (the owner's fast path);
- you hold an earlier version: the \`update\` 402 at the update price (the update path, section 3);
- you hold nothing: the \`new\` 402, as without the header.

## 3. Sign and pay

Sign an EIP-3009 \`TransferWithAuthorization\` for exactly \`accepts[0]\`: \`from\` your address,
\`to\` = \`payTo\`, \`value\` = \`amount\`, \`validAfter\` \`0\`, \`validBefore\` at most now +
\`maxTimeoutSeconds\`, a random 32-byte \`nonce\`, EIP-712 domain \`{name, version}\` from
\`accepts[0].extra\`, chain id ${network.chainId}, verifying contract \`asset\`. Put it in an x402 v2 payment
payload (\`{x402Version: 2, resource, accepted: accepts[0], payload: {signature, authorization},
extensions}\`, echoing \`extensions\` from the 402), base64-encode the JSON (standard base64) and
repeat the request:

\`\`\`
GET ${baseUrl}/api/r/<owner>/<slug>
PAYMENT-SIGNATURE: <base64 payment payload>
X-Quote-Id: <extra.quote_id>
\`\`\`

The official x402 clients (\`@x402/fetch\` with \`@x402/evm\`) build the payload for you and echo
the 402's \`extensions\`, which carry the quote, so they need no \`X-Quote-Id\`. This program buys,
downloads and checks a listing end to end; replace \`<owner>/<slug>\`, put the wallet's key in
\`PRIVATE_KEY\`, and set \`MAX_PER_PAYMENT\` to at least the price. The client's spend limit
(\`spendControls.maxAmountPerPayment\`) is \`$1.00\` by default and it refuses anything dearer
before signing; the 402's \`extra.instructions\` name the value for the price asked.

\`\`\`ts
${buyingSnippet(baseUrl, network)}
\`\`\`
 If you hold an
earlier version, send \`X-Wallet-Signature\` (section 4) in the request options: the first request
then gets the \`update\` 402 at the update price, and the paid retry is judged by the payer alone.

Access is granted only after the payment settles on chain. The \`200\` body is a grant:
\`download_url\` (valid 5 minutes), \`expires_at\`, \`version\`, \`artifact_sha256\`, \`size_bytes\`,
\`kind\`, \`attestation_url\` and the settlement \`transaction\`; the \`PAYMENT-RESPONSE\` header carries
the settlement. Download the zip with a plain \`fetch\` (not the payment-wrapped one: an expired URL
answers \`402 expired_authorization\` with no payment to make, and a wrapped fetch would try to read
one) and check its SHA-256 against \`artifact_sha256\`.

Then verify it against the release's signed attestation before you use it: \`attestation_url\` (an
in-toto statement in a DSSE envelope, Ed25519) and the keys at \`${baseUrl}${KEYS_PATH}\` (fetch them once
and keep them). With the zip saved as \`<slug>-<version>.zip\` and \`EXPECT\` set to what you bought, these
steps (curl, jq, base64, sha256sum, OpenSSL 3; on macOS \`shasum -a 256\`) print five lines starting
\`OK:\`; any \`FAILED:\` means do not use the zip:

\`\`\`sh
${verificationScript(baseUrl)}
\`\`\`

With repo402's source checked out and built, \`node dist/cli.js verify <zip> attestation.json --key
keys.json --expect <owner>/<slug>@<version>\` (\`repo402 verify\`) does the same and prints \`verified\`.
It proves the zip is that listing's release at that version, which commit, tree and scan it came
from, and that the signing key was valid when it signed, without trusting the download URL.

## 4. Fetch what you own again, free

Prove control of the wallet with a signed challenge: its \`message\`, signed verbatim (EIP-191
\`personal_sign\`), sent as the header \`X-Wallet-Signature: base64({"address","nonce","signature"})\`.
Each challenge works once and lives 5 minutes. **Name your wallet and you never ask for one:**
every answer of a wallet route (the buy route's grants and refusals, re-fetch, version status,
entitlements; not a 402, which writes nothing) to a request that names a wallet (the address inside its \`X-Wallet-Signature\`, or
\`?address=<address>\` on the URL) carries a fresh challenge for it as \`wallet_challenge\` (in
\`details\` of an error): sign that one for your next call. \`GET ${baseUrl}/api/auth/challenge?address=<address>&purpose=wallet_ownership\`
gives one too.

- \`GET ${baseUrl}/api/r/<owner>/<slug>/v/<version>\` with \`X-Wallet-Signature\`: a fresh grant for a
  version you own (\`403 not_entitled\` otherwise). Owned versions stay fetchable forever, also after
  the listing is retired. Any refusal here, without a signature too, says whether that version is the
  one on sale (\`details.for_sale\`, \`details.version_on_sale\`, \`details.resource_url\`): an older
  version cannot be bought.
- \`GET ${baseUrl}/api/v/<owner>/<slug>\` with \`X-Wallet-Signature\`: the latest version, whether you
  own it (\`owned\`, \`entitled\`) and what you would pay (\`price_kind\`). Check it before each run.
  Advisory data keeps arriving after a release's scan: \`advisory_flag\` (on the version on sale)
  and \`flagged_holdings\` (on versions you hold) list HIGH/CRITICAL or malicious advisories that now
  match a release's dependencies, with their ids; when a version you run is flagged, stop using it
  and move to an unflagged one. The release log and MCP \`check_version\` carry the same flags.
  Both fields are absent, never empty or null, when nothing is flagged.
- \`GET ${baseUrl}/api/entitlements\` with \`X-Wallet-Signature\`: everything your wallet owns.

## Errors to expect

Every error is \`{code, message, docs_url, details?}\`; match on \`code\` (${baseUrl}/docs/errors).

| code | status | what to do |
|---|---|---|
| \`settlement_pending\` | 402 | retry with the same authorization |
| \`settlement_timeout\` | 504 | retry with the same authorization; it was not consumed |
| \`price_changed\` | 409 | sign the fresh 402 in \`details.payment_required\` |
| \`replay\` | 409 | this authorization was already used; the existing purchase is returned |
| \`insufficient_balance\` | 402 | fund the payer with USDC on ${network.caip2} |
| \`expired_authorization\` | 402 | on a buy: request a fresh 402 and sign it; on a download URL (they live 5 minutes): re-fetch the version for a fresh one, nothing to pay |
| \`authorization_mismatch\` | 400 | your authorization does not match the quote: take a fresh 402 |
| \`invalid_signature\` | 401 | sign \`details.wallet_challenge\` (present when the request named your wallet) and retry; on a re-fetch, \`details.for_sale: false\` says the version is not sold, so sign only if your wallet owns it |
| \`not_entitled\` | 403 | your wallet does not own that version; only the version on sale can be bought (\`details.version_on_sale\`, \`details.resource_url\`) |
| \`retired\` | 410 | no longer sold; owned versions stay fetchable |
| \`release_yanked\` | 410 | the operator withdrew that version (\`details.reason\`); if you own it, \`GET /api/r/{owner}/{slug}\` with your wallet signature grants the version on sale free |
| \`suspended\` | 403 | the operator suspended the listing (\`details.reason\`): nothing is sold; owned versions stay fetchable |
| \`sanctioned_counterparty\` | 403 | no retry succeeds |
| \`blocked_jurisdiction\` | 451 | no retry succeeds |
| \`rate_limited\` | 429 | wait \`retry_after_seconds\` |

## MCP

The same procedure is available as MCP tools at \`${baseUrl}/api/mcp\` (Streamable HTTP):
\`how_to_buy\`, \`get_listing\`, \`check_version\`, \`purchase\` (pass the signed payload as
\`payment_signature\`) and \`fetch_release\`.
`;
}

/**
 * On the devnet and on a testnet, SKILL.md and the buying guide say so first: test money, where to
 * check it and where it comes from (issue 17 item 16); nothing on mainnet.
 */
export function testMoneySection(baseUrl: string, payments: PaymentsSetting): string {
  if (payments.mode === 'devnet') return devnetSection(baseUrl);
  if (payments.network.testnet) return testnetSection(payments.network);
  return '';
}

function testnetSection(network: PaymentNetwork): string {
  return `## Test money: this server runs on ${network.name}

This server is a staging deployment on ${network.name}, a public test network (chain id
\`${network.chainId}\`, network \`${network.caip2}\`). Its USDC is Circle's test USDC at
\`${network.usdc}\`: it has no value, and what you buy here is paid in it.

- Test USDC: <https://faucet.circle.com> (choose ${network.name}) sends some to any address.
- Transactions are public: \`${network.explorerTxUrl}\` shows the \`transaction\` of a grant.
- x402 clients sign with the 402's \`accepts[0].extra\` (\`name\`, \`version\`) and chain id
  \`${network.chainId}\`: an authorization signed here is worthless on Base mainnet.

`;
}

function devnetSection(baseUrl: string): string {
  return `## Test money: this server runs the devnet

${DEVNET_NOTE}

- Chain id \`${BASE.chainId}\`, network \`${BASE.caip2}\`; the token at \`${BASE.usdc}\`
  (the Base USDC address) is a test token with no value. Its EIP-712 domain name is
  \`${DEVNET_TOKEN_DOMAIN.name}\`, not real USDC's \`USD Coin\`: sign with the 402's \`extra.name\` and
  \`extra.version\`, as x402 clients do, and what you sign here can never move real USDC on Base.
  Still, use a wallet made for testing, never one holding real money.
- \`GET ${baseUrl}/api/devnet\`: these facts as JSON.
- \`GET ${baseUrl}/api/devnet/balance/<address>\`: your test-USDC balance (\`balance_micro\`).
- \`GET ${baseUrl}/api/devnet/tx/<hash>\`: a transaction on this chain (the \`transaction\` of a grant).
- Test USDC: \`POST ${baseUrl}/api/devnet/faucet\` with \`{"address":"<address>"}\` grants
  ${formatUsd(FAUCET_GRANT_MICRO)} test USDC, at most ${FAUCET_GRANTS_PER_ADDRESS} times per address in 24 hours; whoever runs this
  server mints more with \`repo402 devnet fund <address> <micro-usdc>\` on its host.

A server taking real money has no \`/api/devnet\` (it answers \`404\`) and its transactions are on Base.

`;
}

export function registerSkillRoutes(app: App, ctx: AppContext): void {
  const { baseUrl } = ctx.config;
  const skill = prebuilt(skillMarkdown(baseUrl, ctx.config.payments), 'text/markdown; charset=utf-8');
  const digest = createHash('sha256').update(skill.body).digest('hex');
  const index = prebuilt(
    SkillIndexSchema.parse({
      $schema: 'https://schemas.agentskills.io/discovery/0.2.0/schema.json',
      skills: [
        {
          name: SKILL_NAME,
          type: 'skill-md',
          description: description(ctx.config.payments.network),
          url: `${baseUrl}${SKILL_PATH}`,
          digest: `sha256:${digest}`,
        },
      ],
    }),
  );
  app.get(
    SKILL_PATH,
    {
      schema: {
        tags: ['public'],
        summary: 'The buy procedure as an Agent Skill',
        response: {
          200: { description: 'SKILL.md', content: { 'text/markdown': { schema: z.string() } } },
          ...errorResponses(),
        },
      },
    },
    async (request, reply) => sendPrebuilt(request, reply, skill, 'public, max-age=300'),
  );
  app.get(
    SKILL_INDEX_PATH,
    {
      schema: {
        tags: ['public'],
        summary: "Agent Skills discovery index (draft format), with each skill's sha256 digest",
        response: { 200: SkillIndexSchema, ...errorResponses() },
      },
    },
    async (request, reply) => sendPrebuilt(request, reply, index, 'public, max-age=300'),
  );
}
