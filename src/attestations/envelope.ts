import { sign } from 'node:crypto';
import { envelopeFromJSON, envelopeToJSON, toDSSEBundle } from '@sigstore/bundle';
import { dsse } from '@sigstore/core';
import { z } from 'zod';
import type { SigningKey } from './keys.js';

/**
 * DSSE envelopes (https://github.com/secure-systems-lab/dsse/blob/master/envelope.md) through
 * Sigstore's libraries: @sigstore/core computes the pre-authentication encoding that is signed,
 * @sigstore/bundle builds and reads the envelope's JSON form. Only the Ed25519 signature is ours
 * (node:crypto), as no Sigstore signer takes a local key.
 */

export const IN_TOTO_PAYLOAD_TYPE = 'application/vnd.in-toto+json';

export interface EnvelopeSignature {
  keyid: string;
  /** Base64 of the 64-byte Ed25519 signature. */
  sig: string;
}

/** DSSE's JSON envelope: `payload` is the base64 of the signed bytes. */
export interface DsseEnvelope {
  payloadType: string;
  payload: string;
  signatures: EnvelopeSignature[];
}

/** The bytes DSSE signs: PAE(payloadType, payload). */
export function preAuthEncoding(payloadType: string, payload: Buffer): Buffer {
  return dsse.preAuthEncoding(payloadType, payload);
}

/** An envelope around `payload` with one signature by `key`. */
export function signEnvelope(
  payload: Buffer,
  key: SigningKey,
  payloadType = IN_TOTO_PAYLOAD_TYPE,
): DsseEnvelope {
  const bundle = toDSSEBundle({
    artifact: payload,
    artifactType: payloadType,
    signature: sign(null, preAuthEncoding(payloadType, payload), key.privateKey),
    keyHint: key.keyid,
  });
  return envelopeToJSON(bundle.content.dsseEnvelope) as DsseEnvelope;
}

/** `key`'s signature over an existing envelope's payload, to be added beside the others. */
export function countersign(envelope: DsseEnvelope, key: SigningKey): EnvelopeSignature {
  const parsed = parseEnvelope(envelope);
  return {
    keyid: key.keyid,
    sig: sign(null, preAuthEncoding(parsed.payloadType, parsed.payload), key.privateKey).toString('base64'),
  };
}

/** DSSE's JSON form, checked before Sigstore's reader (which fills in what is missing). */
const EnvelopeShape = z.object({
  payloadType: z.string().min(1),
  payload: z.base64(),
  signatures: z.array(z.object({ keyid: z.string(), sig: z.base64().min(1) })).min(1),
});

/** An envelope's parts as bytes; throws, saying what is wrong, on anything that is not a DSSE JSON envelope. */
export function parseEnvelope(json: unknown): {
  payloadType: string;
  payload: Buffer;
  signatures: Array<{ keyid: string; sig: Buffer }>;
} {
  const shape = EnvelopeShape.safeParse(json);
  if (!shape.success) {
    const issue = shape.error.issues[0]!;
    throw new Error(`${issue.path.join('.') || 'envelope'}: ${issue.message}`);
  }
  const envelope = envelopeFromJSON(shape.data);
  return {
    payloadType: envelope.payloadType,
    payload: envelope.payload,
    signatures: envelope.signatures.map((s) => ({ keyid: s.keyid, sig: s.sig })),
  };
}
