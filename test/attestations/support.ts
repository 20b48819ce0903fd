import { createHash, createPublicKey, verify } from 'node:crypto';

/** An in-toto statement as parsed JSON: tests read its fields by the specification's names. */
// biome-ignore lint/suspicious/noExplicitAny: JSON read by field name
export type StatementJson = any;

/**
 * TEST VERIFIER, written from the specifications alone (no repo402 or Sigstore code): DSSE v1
 * (https://github.com/secure-systems-lab/dsse/blob/master/protocol.md: the signature is over
 * PAE = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body, lengths as ASCII decimals) and in-toto
 * Statement v1 (https://github.com/in-toto/attestation/blob/main/spec/v1/statement.md), with
 * Ed25519 (RFC 8032) through node:crypto. The key id is the SHA-256 of the raw public key, and a
 * key given with a window must have been valid at the statement's attested_at, as
 * docs/ATTESTATIONS.md says.
 */
export function specVerify(
  envelope: { payloadType: string; payload: string; signatures: Array<{ keyid: string; sig: string }> },
  keys: {
    keys: Array<{ keyid: string; public_key: string; not_before?: string; not_after?: string | null }>;
  },
  zip: Buffer,
): { ok: true; keyid: string; statement: StatementJson } | { ok: false; reason: string } {
  if (envelope.payloadType !== 'application/vnd.in-toto+json') return { ok: false, reason: 'payload type' };
  const body = Buffer.from(envelope.payload, 'base64');
  const type = Buffer.from(envelope.payloadType, 'utf8');
  const pae = Buffer.concat([
    Buffer.from(`DSSEv1 ${type.length} `),
    type,
    Buffer.from(` ${body.length} `),
    body,
  ]);
  const good = envelope.signatures.find((signature) => {
    const key = keys.keys.find((k) => k.keyid === signature.keyid);
    if (!key) return false;
    const raw = Buffer.from(key.public_key, 'base64url');
    if (createHash('sha256').update(raw).digest('hex') !== key.keyid) return false;
    const publicKey = createPublicKey({
      key: { kty: 'OKP', crv: 'Ed25519', x: key.public_key },
      format: 'jwk',
    });
    return verify(null, pae, publicKey, Buffer.from(signature.sig, 'base64'));
  });
  if (!good) return { ok: false, reason: 'no valid signature by a given key' };
  const statement = JSON.parse(body.toString('utf8'));
  // docs/ATTESTATIONS.md: the statement's attested_at lies within the signing key's window.
  const window = keys.keys.find((k) => k.keyid === good.keyid)!;
  if (window.not_before !== undefined) {
    const at = Date.parse(statement.predicate?.attested_at);
    if (
      !(at >= Date.parse(window.not_before)) ||
      (window.not_after != null && !(at <= Date.parse(window.not_after)))
    ) {
      return { ok: false, reason: "the key was not valid at the statement's attested_at" };
    }
  }
  if (statement._type !== 'https://in-toto.io/Statement/v1')
    return { ok: false, reason: 'not a Statement v1' };
  if (typeof statement.predicateType !== 'string' || typeof statement.predicate !== 'object') {
    return { ok: false, reason: 'no predicate' };
  }
  const sha256 = createHash('sha256').update(zip).digest('hex');
  if (
    !statement.subject.some(
      (subject: { digest?: Record<string, string> }) => subject.digest?.sha256 === sha256,
    )
  ) {
    return { ok: false, reason: 'the zip is not the subject' };
  }
  return { ok: true, keyid: good.keyid, statement };
}

/** The envelope with its statement changed by `edit`, the signatures kept: what a forger would send. */
export function withEditedStatement<E extends { payload: string }>(
  envelope: E,
  edit: (statement: StatementJson) => void,
): E {
  const statement: StatementJson = JSON.parse(Buffer.from(envelope.payload, 'base64').toString('utf8'));
  edit(statement);
  return { ...envelope, payload: Buffer.from(JSON.stringify(statement)).toString('base64') };
}
