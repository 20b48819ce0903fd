import { KEYS_PATH } from '../attestations/urls.js';
import type { SshHost } from '../listings/ssh-host.js';
import { VERSIONS_SOLD } from '../platform/errors.js';
import { formatUsd } from '../platform/money/usd.js';
import { RELEASE_TAG_FORM } from '../platform/versions.js';
import { EXAMPLE_PRICE_MICRO, EXAMPLE_PRICE_USD } from './example-price.js';
import { buyingSnippet, type PaymentsSetting, testMoneySection } from './skill.js';
import { verificationScript } from './verification-script.js';

/**
 * The human guides under /docs, as markdown with the deployment's base URL (and, for selling, its
 * SSH host and host keys) filled in, so every command shown can be pasted as is.
 */

export function buyingGuide(baseUrl: string, payments: PaymentsSetting): string {
  const { network } = payments;
  return `# Buying

A listing is addressed as \`<owner>/<slug>\` and sold per listing in USDC on ${network.name} (network
\`${network.caip2}\`) over HTTP 402 (x402 version 2, scheme \`exact\`). You pay once per listing; the
versions you own stay downloadable forever, even after the listing is retired. ${VERSIONS_SOLD} Amounts are
micro-USDC as decimal strings: \`"${EXAMPLE_PRICE_MICRO}"\` is ${formatUsd(EXAMPLE_PRICE_MICRO)} USD.

A person buys on the listing's page: its Buy section connects a browser wallet and pays in a few
clicks, and [your library](/library) keeps every version the wallet owns, free to download again.
Programs and agents have three ways in: plain HTTP, the MCP server at \`${baseUrl}/api/mcp\`, and
the agent skill at
[/.well-known/agent-skills/buy-a-repo/SKILL.md](/.well-known/agent-skills/buy-a-repo/SKILL.md).
Every listing that is for sale is listed at [/.well-known/x402](/.well-known/x402).

${testMoneySection(baseUrl, payments)}## 1. Read the manifest (free)

\`\`\`sh
curl ${baseUrl}/api/label/<owner>/<slug>
\`\`\`

The manifest separates what repo402 measured (\`computed\`: file tree, languages, dependencies,
licence, originality, and the security scan with its verdict, findings and the capabilities the code
uses) from what the seller says (\`self_reported\`: description and trigger hint). The page at
\`${baseUrl}/<owner>/<slug>\` shows the same for people.

## 2. Ask for the resource: the 402

\`\`\`sh
curl -i ${baseUrl}/api/r/<owner>/<slug>
\`\`\`

A priced listing answers \`402 Payment Required\`. The 402 is a paywall, not an error: the body (and,
base64-encoded, the \`PAYMENT-REQUIRED\` header) says exactly what to sign. \`accepts[0]\` names the
USDC contract (\`asset\`), the recipient (\`payTo\`), the \`amount\`, \`maxTimeoutSeconds\` and the
token's EIP-712 domain (\`extra.name\`, \`extra.version\`). The top-level \`extra\` carries the
\`kind\` (\`new\`, or \`update\` when your wallet already owns an earlier version: then \`from\`, \`to\` and
the \`releases\` in between), the \`quote_id\` and its expiry \`valid_before\`.

A free listing answers \`200\` with the download at once.

## 3. Sign and pay

Sign an EIP-3009 \`TransferWithAuthorization\` for exactly \`accepts[0]\` and send it back, base64-encoded,
in \`PAYMENT-SIGNATURE\`, with the quote in \`X-Quote-Id\`:

\`\`\`sh
curl ${baseUrl}/api/r/<owner>/<slug> \\
  -H "PAYMENT-SIGNATURE: <base64 payment payload>" \\
  -H "X-Quote-Id: <extra.quote_id>"
\`\`\`

The official x402 client does all of this for you. This program buys, downloads and checks a listing
end to end; replace \`<owner>/<slug>\` and put the wallet's key in \`PRIVATE_KEY\`. The client's spend
limit (\`spendControls.maxAmountPerPayment\`) is \`$1.00\` by default and it refuses anything dearer
before signing, so \`MAX_PER_PAYMENT\` must be at least the price. As shown it is set for
\`${EXAMPLE_PRICE_USD}\`, the price of the [selling guide](/docs/selling)'s example listing; for another
listing, use its \`price_micro\` / 1,000,000 dollars (the 402's \`extra.instructions\` name the value).

\`\`\`ts
${buyingSnippet(baseUrl, network)}
\`\`\`

It echoes the quote inside the payment's \`extensions\`, so it needs no \`X-Quote-Id\`. A holder of an
earlier version adds \`X-Wallet-Signature\` to the request options to be offered the update price.

Access is granted only after the payment settles on chain. The \`200\` grant carries
\`download_url\` (valid 5 minutes), \`version\`, \`artifact_sha256\` (check it), \`size_bytes\`,
\`attestation_url\` (verify against it, step 4), the \`purchase_id\` and the \`transaction\` hash; the
\`PAYMENT-RESPONSE\` header carries the settlement.

What can happen instead:

| Answer | Why | What to do |
|---|---|---|
| \`402 settlement_pending\`, \`504 settlement_timeout\` | the chain has not confirmed yet | retry with the same authorization; it is not consumed and you are never charged twice |
| \`409 price_changed\` | the price or the version changed since the quote, your purchase kind changed (you hold an earlier version), or the payment carries no quote | sign the fresh 402 in \`details.payment_required\` |
| \`409 replay\` | this authorization was already used | the existing purchase is returned; fetch again below |
| \`402 insufficient_balance\`, \`402 expired_authorization\` | not enough USDC, or the authorization's window closed | fund the wallet, or request a fresh 402 |
| \`400 authorization_mismatch\` | the authorization does not match the quote | sign \`accepts[0]\` exactly |

Every error has the body \`{code, message, docs_url, details?}\`: see the [error reference](/docs/errors).

## 4. Verify what you downloaded

Every release carries a signed attestation: an in-toto Statement v1 in a DSSE envelope, signed with
the service's Ed25519 key, naming the zip's SHA-256 and the listing, version, tag, commit and tree it
was cut from, the scan verdict with its counts, the scanner and analyzer versions, the advisory data
used, the licence and what changed since the previous release. It proves what you bought without
trusting the download URL or the connection. Keep the zip as \`<slug>-<version>.zip\` (the program
above holds it in \`zip\`: add \`fs.writeFileSync('<slug>-' + grant.version + '.zip', zip)\`), note the
grant's \`attestation_url\`, and name what you bought, \`<owner>/<slug>@<version>\` (the grant's \`version\`):
the check includes that the attestation is about that listing and version, so a genuine attestation of
another listing or version does not pass for it. Save the public keys once, from
[${KEYS_PATH}](${KEYS_PATH}); then, with no server involved, with repo402's command-line tool (it
comes with repo402's source: in a checkout, \`npm ci\`, then \`node dist/cli.js verify …\` is
\`repo402 verify …\`):

\`\`\`sh
repo402 verify <slug>-<version>.zip attestation.json --key keys.json --expect <owner>/<slug>@<version>
\`\`\`

It prints \`verified …\` naming \`<owner>/<slug>@<version>\`, the commit, tree and scan, or \`NOT VERIFIED …\`
with the reason and exits 1: the zip is not the attested one, the signature does not verify, the key
was not valid when the statement was signed (its \`attested_at\` outside the key's \`not_before\` to
\`not_after\`), or the statement is about another listing or version. \`--expect\` is required. The same
with standard tools (\`curl\`, \`jq\`, \`base64\`, \`sha256sum\`, OpenSSL 3; on macOS use \`shasum -a 256\`);
set \`EXPECT\` and \`ZIP\` at the top; five lines starting \`OK:\` mean the zip is the one attested, about
the listing and version you bought, by a key valid when it signed; any \`FAILED:\` line means do not use it:

\`\`\`sh
${verificationScript(baseUrl)}
\`\`\`

Keys are rotated without breaking old attestations: the keys document keeps every key with its window
(\`not_before\`, \`not_after\`: the statement times it vouches for, which step 4 checks), and a re-signed
attestation gains a signature, never a different statement.

## 5. Fetch again, free

Prove you control the wallet with a signed \`wallet_ownership\` challenge and fetch any version you
own. Name your wallet (\`?address=\`, or the address inside an \`X-Wallet-Signature\`) and every answer,
success or refusal, carries a fresh challenge for it as \`wallet_challenge\` (in \`details\` of an
error): each signature works once, so sign the one the last answer gave for the next call.

\`\`\`sh
# No signature yet: the refusal hands you a challenge (details.wallet_challenge).
curl "${baseUrl}/api/r/<owner>/<slug>/v/<version>?address=<your address>"
# Sign its message (EIP-191, personal_sign), then:
WALLET_SIG=$(printf '{"address":"<address>","nonce":"<nonce>","signature":"<signature>"}' | base64 | tr -d '\\n')
curl ${baseUrl}/api/r/<owner>/<slug>/v/<version> -H "X-Wallet-Signature: $WALLET_SIG"
# The grant carries wallet_challenge: sign it the same way for the next call, e.g.
curl ${baseUrl}/api/entitlements -H "X-Wallet-Signature: $NEXT_WALLET_SIG"
\`\`\`

A client making many calls for one wallet (a library, a batch of re-downloads) can trade one signed
challenge for a 30-minute wallet session instead, sent as the same header:

\`\`\`sh
curl -X POST ${baseUrl}/api/auth/wallet-sessions -H 'content-type: application/json' \\
  -d '{"address":"<address>","nonce":"<nonce>","signature":"<signature>"}'
# => {"wallet_session":"wallet-session.…","expires_at":"…"}
curl ${baseUrl}/api/entitlements -H "X-Wallet-Signature: <wallet_session>"
\`\`\`

Asking for a version you do not own says whether it is the one on sale
(\`details.for_sale\`, \`details.version_on_sale\`); an older version cannot be bought.
\`GET /api/v/<owner>/<slug>\` with the same header tells whether you own the latest version and what
an upgrade costs; the snippet at \`/api/snippet/<owner>/<slug>\` is a paste-ready note telling a
downstream agent to check that before each run.

## Through MCP

Point any MCP client at \`${baseUrl}/api/mcp\` (Streamable HTTP, stateless). Tools:

- \`how_to_buy\`: whether a listing is for sale, its price and where to buy; no wallet needed.
- \`get_listing\`: the manifest.
- \`check_version\`: the latest version and prices (with \`wallet_signature\`: whether you own it).
- \`purchase\`: without \`payment_signature\` it returns the 402 body; sign \`accepts[0]\` and call it again
  with \`payment_signature\` and \`quote_id\` to receive the grant.
- \`fetch_release\`: re-fetch an owned version with \`wallet_signature\`.
`;
}

export function sellingGuide(baseUrl: string, ssh: SshHost): string {
  return `# Selling

You list a private repository; every \`vX.Y.Z\` tag becomes a release that repo402 snapshots into a zip,
analyses and scans. Buyers pay per listing in USDC, paid out to your payout address.

There are two ways to sell: the web app, for people, and the JSON API, for programs and agents. Both do
the same things through the same routes; your code reaches repo402 with \`git push\` either way.

## 1. With the web app

1. **Sign in with your wallet.** Open [the web app](${baseUrl}/app) and sign in: your wallet signs a
   one-time message with your payout address (nothing is paid). The first time, register there: a
   handle, the invite code the operator of this server gave you (invite only in this version), an abuse
   contact and the creator agreement; your wallet's signature proves the payout address is yours. You
   stay signed in for 12 hours in that tab.
2. **List a repository.** Choose New listing, give it a name (its page will be
   \`${baseUrl}/<handle>/<name>\`) and paste the public half of a deploy key made for it alone:

   \`\`\`sh
   ssh-keygen -t ed25519 -f deploy_key -N ''
   cat deploy_key.pub
   \`\`\`

   To sell a repository you keep on GitHub instead, see Rail A at the end of this guide.
3. **Push your code and a release tag**, as the listing's page shows and the next section explains.
4. **Price, describe and publish** on the listing's page: the price and the update price in dollars, a
   description for buyers and a hint of when to use it, then Publish once a release has passed its
   scan. The page shows every release with its full scan report, and the manifest as buyers will see it.

## 2. Push your code and tags

A deploy key pushes to the repository of every listing it is registered on (only this one, unless the
same public key is registered on another listing too, by you or by anyone holding it): make a key of its
own for each listing.

**Trust the server's host key before the first push.** This server's SSH host keys are:

| type | fingerprint |
|---|---|
${ssh.keys.map((key) => `| \`${key.type}\` | \`${key.sha256}\` |`).join('\n')}

Check that the server you reach over SSH presents them: every line this prints must show one of the
fingerprints above (if one does not, stop: you are not talking to this server).

\`\`\`sh
ssh-keyscan -p ${ssh.port} ${ssh.host} | ssh-keygen -lf -
\`\`\`

Then add the keys to \`known_hosts\`, so \`ssh\` knows the server before the first connection and never
asks (\`git push\` then works with \`StrictHostKeyChecking=yes\`):

\`\`\`sh
mkdir -p ~/.ssh && cat >> ~/.ssh/known_hosts <<'EOF'
${ssh.keys.map((key) => key.knownHostsLine).join('\n')}
EOF
\`\`\`

Then, in your repository, push it with its first release tag (the listing's page, and the API's answer,
name its remote):

\`\`\`sh
export GIT_SSH_COMMAND="ssh -i $PWD/deploy_key -o IdentitiesOnly=yes -o StrictHostKeyChecking=yes"
git remote add repo402 ${ssh.remote('<handle>', 'my-tool')}
git tag v1.0.0
git push repo402 HEAD:main --tags
\`\`\`

\`HEAD:main\` pushes whichever branch you have checked out (a fresh \`git init\` often calls it \`master\`)
to the listing's one branch, \`main\`; \`--tags\` sends the release tag with it.

Each new release tag cuts a release: a zip of the tagged tree, its analysis and the security scan. A
release tag looks like ${RELEASE_TAG_FORM}. A \`v\` and a digit start release tags only: the server refuses any other (\`v1.2\`,
\`v1.4.0-beta\`) and says why; name other tags without them (\`vnext\`, \`nightly\` are yours). The cut runs in
the background after the push (seconds for a small repository): the listing's page shows it, and so
does \`GET /api/listings/{id}\`, under \`cuts\` while it is queued, then as \`latest_release\` (passed) or
\`newest_release\` (failed, with its \`scan_report\`); publishing before a release passed answers
\`409 listing_not_ready\`. Release tags are immutable:
moving or deleting one is refused, and so is one that does not point at a commit. A push with any
refused tag is refused whole, its branches and good tags too, with one \`remote: repo402: …\` line per
refusal: fix or drop the named tags and push again. \`POST /api/listings/{id}/sync\` cuts the newest
uncut tag, or a \`ref\` with a \`version\`.

Every release goes on the public release log, failing ones too. A release fails its scan for a secret,
a HIGH or CRITICAL dependency CVE, a known-malicious dependency, hidden-Unicode instruction
smuggling, or a size over 200 MB / 20,000 files. The verdict is final for that version: fix it and
tag a new one. The scan report (the listing's page, or \`scan_report\` on \`GET /api/listings/{id}\`)
gives the path and line of each finding, and notes any documented example or placeholder credential
it allowed (AWS's \`AKIAIOSFODNN7EXAMPLE\`, say): a note never fails a release.

## 3. With the API, for programs and agents

The same steps as JSON routes, shown with \`curl\`.

### Register (invite only in this version)

Registration needs an invite code, which the operator of this server creates (\`repo402 invites create\`
on its host). Prove you control the payout address with a signed \`address_proof\` challenge
(any EIP-191 signer: viem's \`signMessage\`, \`cast wallet sign\`, or your wallet):

\`\`\`sh
curl "${baseUrl}/api/auth/challenge?address=<payout address>&purpose=address_proof"
# sign \`message\` verbatim (EIP-191 personal_sign) with the payout wallet
curl ${baseUrl}/api/terms   # note its \`version\`
curl -X POST ${baseUrl}/api/creators -H 'content-type: application/json' \\
  -H "Idempotency-Key: $(node -p 'crypto.randomUUID()')" -d '{
    "handle": "<your handle>",
    "payout_address": "<payout address>",
    "accepted_terms_version": "<terms version>",
    "address_proof": {"nonce": "<nonce>", "signature": "<signature>"},
    "invite_code": "<invite code>",
    "abuse_contact": "<email>"
  }'
\`\`\`

The \`201\` carries your \`api_key\` once: send it as \`Authorization: Bearer <api_key>\`. Lost or leaked it?
Rotate it with a \`rotate_key\` signature from the payout address (\`POST /api/auth/rotate-key\`): the answer
carries a new key, and every other key and web session of yours stops working at once (\`revoked\` says how
many). Changing the payout address or the abuse contact (\`PATCH /api/creators/me\`) needs a fresh
\`step_up\` signature from the current payout address and takes effect after 48 hours. A new payout
address needs two signatures: the \`step_up\` over a challenge minted with
\`new_payout_address=<new address>\`, and an \`address_proof\` signed by the new address, as at
registration (without it: \`400 payout_address_unverified\`).

### Create a hosted listing (Rail B)

\`\`\`sh
ssh-keygen -t ed25519 -f deploy_key -N ''
curl -X POST ${baseUrl}/api/listings -H "Authorization: Bearer $KEY" -H 'content-type: application/json' \\
  -d "{\\"source\\": \\"hosted\\", \\"slug\\": \\"my-tool\\", \\"ssh_public_key\\": \\"$(cat deploy_key.pub)\\"}"
\`\`\`

The answer carries the git remote (\`${ssh.remote('<handle>', 'my-tool')}\`), the default branch
\`main\` and the server's host-key fingerprints (\`host_key_fingerprints\`, the ones listed above). Then
push as section 2 shows.

### Price, describe, publish

\`\`\`sh
curl -X PATCH ${baseUrl}/api/listings/<id> -H "Authorization: Bearer $KEY" -H 'content-type: application/json' \\
  -d '{"price_micro": "${EXAMPLE_PRICE_MICRO}", "update_price_micro": "0", "description": "…", "trigger_hint": "…"}'
curl -X POST ${baseUrl}/api/listings/<id>/publish -H "Authorization: Bearer $KEY"
\`\`\`

\`update_price_micro\` \`"0"\` means updates are included: a buyer who pays while it is \`"0"\` owns
every later version too. A free claim (a listing priced \`"0"\`) holds the version claimed; its later
versions follow the update price in force. Price changes apply to future purchases only. Publishing
needs a description, a trigger hint, a price (zero is a free listing) and a passing release; a
repository that overlaps another listing's by 90 % or more cannot be published.

A hosted listing without a licence can have repo402 commit an allow-listed LICENSE (\`MIT\`,
\`Apache-2.0\`, \`BSD-3-Clause\`, \`MPL-2.0\`, named by \`spdx\`) on top of \`main\`; push your code
first, then \`git pull repo402 main\` before your next push:

\`\`\`sh
curl -X POST ${baseUrl}/api/listings/<id>/licence -H "Authorization: Bearer $KEY" -H 'content-type: application/json' \\
  -d '{"spdx": "MIT"}'
\`\`\`

\`DELETE /api/listings/{id}\` retires a listing for good: it is no longer sold, holders keep every
version they own, the manifest and release log stay up, and the hosted repository is archived.

## Selling from a private GitHub repository (Rail A)

Instead of pushing to repo402 (section 2), you can list a private repository you keep on GitHub.
repo402 reads it through its GitHub App, which can only read the repositories you choose; nothing is
ever written to GitHub. Registering, pricing and publishing are as above. This needs a deployment whose
operator has set up the App; otherwise \`source: "github"\` is refused with \`400 invalid_request\`.

**Install the App.** Open the App's page the operator gives you (\`https://github.com/apps/<app name>\`),
choose Install, pick the account or organisation that owns the repository, and choose
**Only select repositories** with the repository you sell. The App asks for Contents: read and
Metadata: read.

**Find the installation id.** It is the number at the end of the installation's settings address
(Settings → Applications → Installed GitHub Apps → Configure; for an organisation, its settings →
GitHub Apps → Configure): \`https://github.com/settings/installations/<id>\` for a personal account,
\`https://github.com/organizations/<org>/settings/installations/<id>\` for an organisation.

**Prove the repository is yours.** Commit a file named \`.repo402\` at the root of the default branch
holding your repo402 handle on a line of its own (more handles, one per line, if several accounts
may list it). An installation id is visible in GitHub's addresses, so reaching the repository
proves nothing; writing to it does. Without the file the listing is refused with \`404 not_found\`,
the same answer as for a repository the App does not reach. The file is part of your repository, so
it ships in the zip buyers download (as \`<slug>/.repo402\`) in every release cut from a commit that
holds it; it names your handle and nothing else. It is only checked when the listing is created.

**Create the listing.**

\`\`\`sh
curl -X POST ${baseUrl}/api/listings -H "Authorization: Bearer $KEY" -H 'content-type: application/json' \\
  -d '{"source": "github", "slug": "my-tool", "installation_id": <installation id>, "repo": "<owner>/<name>"}'
\`\`\`

Give \`repo\` (\`owner/name\`) or \`github_repo_id\` (the repository's numeric id), not both;
\`price_micro\`, \`update_price_micro\`, \`description\` and \`trigger_hint\` may be given here too. The
answer carries a \`github\` block (below). Refused: \`404 not_found\` when the installation does not reach
the repository (the App is not installed on it, or the id is wrong), \`422 public_repo\` for a public
repository, \`400\` when the repository already backs a live listing (one repository, one listing).

**Tag a release.** Push a release tag (\`vMAJOR.MINOR.PATCH\`) to GitHub as you always do; other
\`v*\` tags (\`v1.2\`, \`v1.4.0-beta\`) are ignored, since GitHub cannot be told to refuse them:

\`\`\`sh
git tag -a v1.0.0 -m "First release" && git push origin v1.0.0
\`\`\`

GitHub tells repo402 (a webhook); repo402 asks GitHub which commit the tag names, fetches that one
commit, and cuts the release as for a hosted listing: the zip, the analysis, the scan and the public log.
The annotated tag's message is the changelog; a lightweight tag gives the tagged commit's subject. A
tree over 200 MB or 20,000 files is recorded as a failing release, as on the hosted rail. Tags
pushed before the listing existed are not announced: cut them with sync.

**Sync is the recovery path**: for a tag pushed before the listing, a webhook that never arrived, a tag
refused for the day's release limit, or once access is back:

\`\`\`sh
curl -X POST ${baseUrl}/api/listings/<id>/sync -H "Authorization: Bearer $KEY" -H 'content-type: application/json' -d '{}'
\`\`\`

It takes the same bodies as for a hosted listing (nothing for the newest uncut tag, \`version\`, \`ref\`,
\`ref\` with \`version\`); \`ref\` is a branch, tag or commit SHA GitHub knows. Given a \`ref\` and a
\`version\` with no such tag, repo402 records the tag in its own copy only. A tree over 200 MB or 20,000
files is \`413 repo_too_large\` before anything is queued; the answer names the tag, and since nothing was
claimed a sync without a body picks that tag again: give \`version\` or \`ref\` to cut another.

**Tags stay immutable for buyers.** GitHub lets you move or delete a tag; repo402 does not follow. A
release keeps the commit it was cut from and its zip, and its version is never cut again. The change is
listed in \`github.tag_changes\` on \`GET /api/listings/{id}\`: the tag, \`released_commit_sha\`, and
\`commit_sha\`, where the tag points now (\`null\` once deleted). To ship changed code, tag a new version.

**The \`github\` block** on your listing: \`installation_id\`, \`repo_id\`, \`repo\`, \`state\`, \`reason\`,
\`state_changed_at\` (and \`tag_changes\` on a single listing). \`state\` is:

- \`ok\`: new releases can be cut.
- \`unreachable\`: the App lost access (uninstalled, the installation suspended, the repository removed from
  it); \`reason\` says which. Tags pushed meanwhile are not cut, and sync answers \`404 not_found\` with
  \`details.source_state: "unreachable"\` and a message saying what to do: install the App again,
  unsuspend the installation, or add the repository back to it. Unsuspend the installation or add the repository back to it,
  and the listing is \`ok\` again; then sync the tags you missed. A release whose cut failed because
  access was gone (in \`cuts\` with \`state: "failed"\`) was never made: sync cuts that version too.
- \`public\`: the repository was made public. Sync answers \`422 public_repo\`; make it private again,
  then sync.

In every state, what was cut stays on sale and buyers keep downloading what they own: repo402 stores the
zips. Reinstalling the App gives a new installation id; the listing moves to it when the repository is
chosen while installing or added to that installation later. To pause, suspend the installation
rather than uninstall the App.
`;
}
