import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A random 256-bit secret with a readable prefix, such as an API key or an invite code. */
export function newSecret(prefix: string, bytes = 32): string {
  return `${prefix}${randomBytes(bytes).toString('base64url')}`;
}

/** Secrets are stored only as this digest, so a database leak does not leak credentials. */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/** Whether an `Authorization` header is `Bearer <token>`, compared in constant time whatever the given length. */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return header !== undefined && timingSafeEqual(digest(header), digest(`Bearer ${token}`));
}
