import { KEYS_PATH } from '../attestations/urls.js';

/**
 * The offline check of a download against its attestation with standard tools (curl, jq, base64,
 * sha256sum, OpenSSL 3): five lines starting `OK:` when all holds. The buying guide and SKILL.md
 * show it; docs/ATTESTATIONS.md keeps the same text (a test compares them).
 */
export function verificationScript(baseUrl: string): string {
  return `EXPECT=<owner>/<slug>@<version>
ZIP=<slug>-<version>.zip
curl -so attestation.json <attestation_url>
curl -so keys.json ${baseUrl}${KEYS_PATH}
# 1. The zip is the statement's subject.
jq -r '.payload' attestation.json | base64 -d > statement.json
test "$(jq -r '.subject[0].digest.sha256' statement.json)" = "$(sha256sum "$ZIP" | cut -d' ' -f1)" \\
  && echo "OK: the zip is the subject" || echo "FAILED: the zip is not the attested one; do not use it"
# 2. The signature: Ed25519 over DSSE's pre-authentication encoding of the statement.
KEYID=$(jq -r '.signatures[0].keyid' attestation.json)
jq -r --arg k "$KEYID" '.keys[] | select(.keyid == $k) | .public_key_pem' keys.json > key.pem
TYPE=$(jq -r '.payloadType' attestation.json)
printf 'DSSEv1 %d %s %d ' "\${#TYPE}" "$TYPE" "$(wc -c < statement.json)" > pae.bin
cat statement.json >> pae.bin
jq -r '.signatures[0].sig' attestation.json | base64 -d > sig.bin
openssl pkeyutl -verify -pubin -inkey key.pem -rawin -in pae.bin -sigfile sig.bin \\
  && echo "OK: the signature verifies" || echo "FAILED: the statement was altered or not signed by this key"
# 3. The key id is the SHA-256 of the raw public key.
test "$(openssl pkey -pubin -in key.pem -outform DER | tail -c 32 | sha256sum | cut -d' ' -f1)" = "$KEYID" \\
  && echo "OK: the key id matches" || echo "FAILED: the key is not the one the signature names"
# 4. The key was valid when it signed: the statement's attested_at lies within the key's window
#    (all these times are UTC in one form, YYYY-MM-DDTHH:MM:SS.sssZ, so they compare as strings).
AT=$(jq -r '.predicate.attested_at' statement.json)
jq -e --arg k "$KEYID" --slurpfile s statement.json '($s[0].predicate.attested_at | strings) as $t
  | .keys[] | select(.keyid == $k) | .not_before <= $t and (.not_after == null or $t <= .not_after)' \\
  keys.json > /dev/null \\
  && echo "OK: the key was valid at $AT" || echo "FAILED: the key was not valid at $AT, when the statement was signed"
# 5. The statement is about the listing and version you bought.
GOT=$(jq -r '.predicate | "\\(.listing.owner)/\\(.listing.slug)@\\(.version)"' statement.json)
test "$GOT" = "$EXPECT" \\
  && echo "OK: the statement is about $EXPECT" || echo "FAILED: the statement is about $GOT, not $EXPECT; do not use it"
# What was attested:
jq '.predicate | {listing: .listing.channel, version, tag, commit_sha, tree_sha, scan: .scan.verdict, attested_at}' statement.json`;
}
