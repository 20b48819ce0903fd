import { createHash, createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';

/**
 * Ed25519 keys as attestations name them. A private key is given as its 32-byte seed (RFC 8032),
 * a public key travels as its raw 32 bytes, and its key id is the SHA-256 (hex) of those bytes:
 * anyone holding the public key computes the same id, so the id cannot point at another key.
 */

// DER headers of PKCS#8 and SPKI for Ed25519 (RFC 8410): the raw key bytes follow them.
const PKCS8_ED25519 = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_ED25519 = Buffer.from('302a300506032b6570032100', 'hex');

export interface SigningKey {
  keyid: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** The raw 32-byte public key. */
  rawPublicKey: Buffer;
}

export function keyIdOf(rawPublicKey: Buffer): string {
  return createHash('sha256').update(rawPublicKey).digest('hex');
}

export function signingKeyFromSeed(seed: Buffer): SigningKey {
  if (seed.length !== 32) throw new Error('an Ed25519 seed is 32 bytes');
  const privateKey = createPrivateKey({
    key: Buffer.concat([PKCS8_ED25519, seed]),
    format: 'der',
    type: 'pkcs8',
  });
  const publicKey = createPublicKey(privateKey);
  const rawPublicKey = rawOf(publicKey);
  return { keyid: keyIdOf(rawPublicKey), privateKey, publicKey, rawPublicKey };
}

/** A public key from its raw 32 bytes; throws when they are not 32 bytes. */
export function publicKeyFromRaw(raw: Buffer): KeyObject {
  if (raw.length !== 32) throw new Error('an Ed25519 public key is 32 bytes');
  return createPublicKey({ key: Buffer.concat([SPKI_ED25519, raw]), format: 'der', type: 'spki' });
}

function rawOf(publicKey: KeyObject): Buffer {
  const der = publicKey.export({ format: 'der', type: 'spki' });
  return der.subarray(SPKI_ED25519.length);
}

/** The public key as PEM (SPKI), the form `openssl pkeyutl -verify -pubin` reads. */
export function publicKeyPem(publicKey: KeyObject): string {
  return publicKey.export({ format: 'pem', type: 'spki' }).toString();
}
