import { createHash, randomBytes } from 'node:crypto';

/** A random 256-bit secret with a readable prefix, such as an API key or an invite code. */
export function newSecret(prefix: string, bytes = 32): string {
  return `${prefix}${randomBytes(bytes).toString('base64url')}`;
}

/** Secrets are stored only as this digest, so a database leak does not leak credentials. */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}
