import { createHash } from 'node:crypto';
import ssh2 from 'ssh2';
import { AppError } from '../platform/errors.js';

const { utils } = ssh2;

/** Key types accepted as deploy keys; RSA only from 2048 bits. */
const ALLOWED_TYPES = new Set([
  'ssh-ed25519',
  'ecdsa-sha2-nistp256',
  'ecdsa-sha2-nistp384',
  'ecdsa-sha2-nistp521',
  'ssh-rsa',
]);
export const MIN_RSA_BITS = 2048;

export interface DeployPublicKey {
  algorithm: string;
  /** `<type> <base64>`, the comment dropped. */
  publicKey: string;
  fingerprint: string;
}

/** OpenSSH's `SHA256:` fingerprint (unpadded base64 of the SHA-256 of the key blob). */
export function fingerprintOf(blob: Buffer): string {
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

/**
 * Parses an OpenSSH public key line (`ssh-ed25519 AAAA… comment`) into a deploy key, or throws
 * `400 invalid_request` on `field`: private keys, other types, short RSA keys and garbage alike.
 */
export function parseDeployKey(line: string, field = 'ssh_public_key'): DeployPublicKey {
  const refuse = (reason: string) => AppError.invalid([{ field, reason }]);
  const match = /^\s*([a-z0-9@.-]+) ([A-Za-z0-9+/]+={0,3})(?: [^\r\n]*)?\s*$/.exec(line);
  if (!match) throw refuse('expected one OpenSSH public key line, for example "ssh-ed25519 AAAA… comment"');
  const [, type, base64] = match as unknown as [string, string, string];
  if (!ALLOWED_TYPES.has(type)) {
    throw refuse('key type must be ssh-ed25519, ecdsa-sha2-nistp256/384/521 or ssh-rsa (2048 bits or more)');
  }
  const parsed = utils.parseKey(`${type} ${base64}`);
  if (parsed instanceof Error || parsed.isPrivateKey() || parsed.type !== type) {
    throw refuse('not a valid public key of the named type');
  }
  const blob = parsed.getPublicSSH();
  if (type === 'ssh-rsa' && rsaModulusBits(blob) < MIN_RSA_BITS) {
    throw refuse(`RSA keys must have at least ${MIN_RSA_BITS} bits`);
  }
  return {
    algorithm: type,
    publicKey: `${type} ${blob.toString('base64')}`,
    fingerprint: fingerprintOf(blob),
  };
}

/** The size of an RSA key's modulus, read from its wire blob: string type, mpint e, mpint n. */
function rsaModulusBits(blob: Buffer): number {
  let offset = 0;
  const next = () => {
    const length = blob.readUInt32BE(offset);
    const value = blob.subarray(offset + 4, offset + 4 + length);
    offset += 4 + length;
    return value;
  };
  next();
  next();
  const modulus = next();
  let start = 0;
  while (start < modulus.length && modulus[start] === 0) start += 1;
  if (start === modulus.length) return 0;
  return (modulus.length - start - 1) * 8 + (32 - Math.clz32(modulus[start]!));
}
