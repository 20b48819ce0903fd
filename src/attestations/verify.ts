import { createHash, type KeyObject, verify } from 'node:crypto';
import { z } from 'zod';
import { IN_TOTO_PAYLOAD_TYPE, parseEnvelope, preAuthEncoding } from './envelope.js';
import { keyIdOf, publicKeyFromRaw } from './keys.js';
import { STATEMENT_TYPE } from './statement.js';

/**
 * Verifying a release attestation, with nothing but the envelope, the trusted public keys and
 * (optionally) the zip's digest: the `repo402 verify` command runs it offline, and the server runs
 * it on every envelope it signs before storing it.
 */

export interface TrustedKey {
  keyid: string;
  publicKey: KeyObject;
}

export type Verification =
  | {
      ok: true;
      /** The key whose signature verified. */
      keyid: string;
      statement: VerifiedStatement;
    }
  | { ok: false; reason: string };

const Digest = z.record(z.string(), z.string());
const StatementShape = z.looseObject({
  _type: z.literal(STATEMENT_TYPE),
  subject: z.array(z.looseObject({ name: z.string().optional(), digest: Digest })).min(1),
  predicateType: z.string().min(1),
  predicate: z.looseObject({}),
});
export type VerifiedStatement = z.infer<typeof StatementShape>;

/** The keys document (`/.well-known/repo402-keys.json`) as the verifier reads it. */
export const KeysDocumentShape = z.looseObject({
  keys: z.array(
    z.looseObject({
      keyid: z.string(),
      algorithm: z.literal('ed25519'),
      public_key: z.base64url(),
    }),
  ),
});

/**
 * The keys of a keys document. A key whose id is not the SHA-256 of its bytes is refused: the id
 * in an envelope must name exactly one key.
 */
export function trustedKeysOf(document: unknown): TrustedKey[] {
  const parsed = KeysDocumentShape.safeParse(document);
  if (!parsed.success)
    throw new Error('not a repo402 keys document (expected {keys: [{keyid, algorithm, public_key}]})');
  return parsed.data.keys.map((key) => {
    const raw = Buffer.from(key.public_key, 'base64url');
    if (keyIdOf(raw) !== key.keyid)
      throw new Error(`key ${key.keyid}: its id is not the SHA-256 of its public key`);
    return { keyid: key.keyid, publicKey: publicKeyFromRaw(raw) };
  });
}

/**
 * Checks, in order: the envelope is DSSE JSON with the in-toto payload type; one of its signatures
 * is by a trusted key and verifies (Ed25519 over PAE(payloadType, payload)); the payload is an
 * in-toto Statement v1; and, when `artifactSha256` is given, a subject carries that SHA-256.
 */
export function verifyAttestation(
  envelopeJson: unknown,
  keys: TrustedKey[],
  artifactSha256?: string,
): Verification {
  let envelope: ReturnType<typeof parseEnvelope>;
  try {
    envelope = parseEnvelope(envelopeJson);
  } catch (error) {
    return { ok: false, reason: `not a DSSE envelope: ${(error as Error).message}` };
  }
  if (envelope.payloadType !== IN_TOTO_PAYLOAD_TYPE) {
    return { ok: false, reason: `payload type is ${envelope.payloadType}, not ${IN_TOTO_PAYLOAD_TYPE}` };
  }
  const signed = preAuthEncoding(envelope.payloadType, envelope.payload);
  const verifiedBy = envelope.signatures.find((signature) => {
    const key = keys.find((candidate) => candidate.keyid === signature.keyid);
    return key !== undefined && verify(null, signed, key.publicKey, signature.sig);
  });
  if (!verifiedBy) {
    const known = envelope.signatures.some((s) => keys.some((k) => k.keyid === s.keyid));
    return {
      ok: false,
      reason: known
        ? 'the signature does not verify: the statement was altered or not signed by this key'
        : `no signature by a trusted key (signed by ${envelope.signatures.map((s) => s.keyid).join(', ') || 'nobody'})`,
    };
  }
  let statement: VerifiedStatement;
  try {
    const parsed = StatementShape.safeParse(JSON.parse(envelope.payload.toString('utf8')));
    if (!parsed.success) return { ok: false, reason: 'the payload is not an in-toto Statement v1' };
    statement = parsed.data;
  } catch {
    return { ok: false, reason: 'the payload is not JSON' };
  }
  if (artifactSha256 !== undefined) {
    const wanted = artifactSha256.toLowerCase();
    if (!statement.subject.some((subject) => subject.digest.sha256?.toLowerCase() === wanted)) {
      return { ok: false, reason: `the zip (sha256 ${wanted}) is not the attested subject` };
    }
  }
  return { ok: true, keyid: verifiedBy.keyid, statement };
}

/** SHA-256 (hex) of a stream's bytes, read as it comes. */
export async function sha256OfStream(stream: AsyncIterable<Buffer | string>): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of stream) hash.update(chunk);
  return hash.digest('hex');
}
