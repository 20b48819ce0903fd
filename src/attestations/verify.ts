import { createHash, type KeyObject, verify } from 'node:crypto';
import { z } from 'zod';
import { IN_TOTO_PAYLOAD_TYPE, parseEnvelope, preAuthEncoding } from './envelope.js';
import { type ExpectedRelease, formatRelease } from './expect.js';
import { keyIdOf, publicKeyFromRaw } from './keys.js';
import { STATEMENT_TYPE } from './statement.js';

/**
 * Verifying a release attestation, with nothing but the envelope, the trusted public keys (with
 * their windows) and, optionally, the zip's digest and the listing and version the buyer expects:
 * the `repo402 verify` command runs it offline, and the server runs it on every envelope it signs
 * before storing it.
 */

export interface TrustedKey {
  keyid: string;
  publicKey: KeyObject;
  /**
   * The statement times (`predicate.attested_at`) the key vouches for, bounds included; a null
   * `notAfter` is the key signing now. Keys from a keys document always have one; the signing key
   * checking its own fresh signature has none.
   */
  window?: { notBefore: Date; notAfter: Date | null };
}

export interface VerifyOptions {
  /** The zip's SHA-256: a subject must carry it. */
  artifactSha256?: string;
  /** The listing and version bought: the statement must be about them. */
  expect?: ExpectedRelease;
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

const Instant = z.iso.datetime({ offset: true });

/** The keys document (`/.well-known/repo402-keys.json`) as the verifier reads it. */
export const KeysDocumentShape = z.looseObject({
  keys: z.array(
    z.looseObject({
      keyid: z.string(),
      algorithm: z.literal('ed25519'),
      public_key: z.base64url(),
      not_before: Instant,
      not_after: Instant.nullable(),
    }),
  ),
});

/**
 * The keys of a keys document, with their windows. A key whose id is not the SHA-256 of its bytes
 * is refused: the id in an envelope must name exactly one key.
 */
export function trustedKeysOf(document: unknown): TrustedKey[] {
  const parsed = KeysDocumentShape.safeParse(document);
  if (!parsed.success)
    throw new Error(
      'not a repo402 keys document (expected {keys: [{keyid, algorithm, public_key, not_before, not_after}]})',
    );
  return parsed.data.keys.map((key) => {
    const raw = Buffer.from(key.public_key, 'base64url');
    if (keyIdOf(raw) !== key.keyid)
      throw new Error(`key ${key.keyid}: its id is not the SHA-256 of its public key`);
    return {
      keyid: key.keyid,
      publicKey: publicKeyFromRaw(raw),
      window: {
        notBefore: new Date(key.not_before),
        notAfter: key.not_after === null ? null : new Date(key.not_after),
      },
    };
  });
}

/** The statement's own signed time: when it was attested, the time every signature is checked against. */
export function attestedAtOf(statement: VerifiedStatement): Date | undefined {
  const value = statement.predicate.attested_at;
  if (typeof value !== 'string' || !Instant.safeParse(value).success) return undefined;
  return new Date(value);
}

function inWindow(window: NonNullable<TrustedKey['window']>, at: Date): boolean {
  return (
    window.notBefore.getTime() <= at.getTime() &&
    (window.notAfter === null || at.getTime() <= window.notAfter.getTime())
  );
}

function describeWindow(window: NonNullable<TrustedKey['window']>): string {
  return `${window.notBefore.toISOString()} to ${window.notAfter?.toISOString() ?? 'now'}`;
}

/** The listing and version the predicate names, as `owner/slug@version` (`?` for what is missing). */
export function releaseNamedBy(statement: VerifiedStatement): string {
  const predicate = statement.predicate as {
    listing?: { owner?: unknown; slug?: unknown };
    version?: unknown;
  };
  const part = (value: unknown) => (typeof value === 'string' ? value : '?');
  return formatRelease({
    owner: part(predicate.listing?.owner),
    slug: part(predicate.listing?.slug),
    version: part(predicate.version),
  });
}

/**
 * Checks, in order: the envelope is DSSE JSON with the in-toto payload type; one of its signatures
 * is by a trusted key and verifies (Ed25519 over PAE(payloadType, payload)); the payload is an
 * in-toto Statement v1; the statement's time (`predicate.attested_at`, which the signature covers)
 * lies within that key's window; when `artifactSha256` is given, a subject carries that SHA-256;
 * and, when `expect` is given, the predicate names that listing (owner and slug) and version.
 */
export function verifyAttestation(
  envelopeJson: unknown,
  keys: TrustedKey[],
  options: VerifyOptions = {},
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
  const verifiedBy = envelope.signatures.flatMap((signature) => {
    const key = keys.find((candidate) => candidate.keyid === signature.keyid);
    return key !== undefined && verify(null, signed, key.publicKey, signature.sig) ? [key] : [];
  });
  if (verifiedBy.length === 0) {
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
  // Only a signature by a key that was valid at the statement's own (signed) time counts.
  const attestedAt = attestedAtOf(statement);
  const valid = verifiedBy.find((key) => !key.window || (attestedAt && inWindow(key.window, attestedAt)));
  if (!valid) {
    const key = verifiedBy[0]!;
    return {
      ok: false,
      reason: attestedAt
        ? `key ${key.keyid} was not valid when the statement was signed: attested_at ${attestedAt.toISOString()} is outside its window (${describeWindow(key.window!)})`
        : `the statement has no attested_at to check key ${key.keyid}'s window against`,
    };
  }
  if (options.artifactSha256 !== undefined) {
    const wanted = options.artifactSha256.toLowerCase();
    if (!statement.subject.some((subject) => subject.digest.sha256?.toLowerCase() === wanted)) {
      return { ok: false, reason: `the zip (sha256 ${wanted}) is not the attested subject` };
    }
  }
  if (options.expect !== undefined) {
    const { owner, slug, version } = options.expect;
    const predicate = statement.predicate as {
      listing?: { owner?: unknown; slug?: unknown };
      version?: unknown;
    };
    if (
      predicate.listing?.owner !== owner ||
      predicate.listing?.slug !== slug ||
      predicate.version !== version
    ) {
      return {
        ok: false,
        reason: `the attestation is for ${releaseNamedBy(statement)}, not ${formatRelease(options.expect)}`,
      };
    }
  }
  return { ok: true, keyid: valid.keyid, statement };
}

/** SHA-256 (hex) of a stream's bytes, read as it comes. */
export async function sha256OfStream(stream: AsyncIterable<Buffer | string>): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of stream) hash.update(chunk);
  return hash.digest('hex');
}
