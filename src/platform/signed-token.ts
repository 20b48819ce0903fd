import { createHmac, timingSafeEqual } from 'node:crypto';
import type { z } from 'zod';

/**
 * Stateless tokens (quotes, download URLs): `<kind>.<base64url JSON>.<base64url HMAC-SHA256>`,
 * keyed per kind from the installation secret so a token of one kind never verifies as another.
 */

/** Derived keys per installation secret and kind: every 402, quote check and grant needs one. */
const derivedKeys = new WeakMap<Buffer, Map<string, Buffer>>();

function keyFor(appSecret: Buffer, kind: string): Buffer {
  let keys = derivedKeys.get(appSecret);
  if (!keys) {
    keys = new Map();
    derivedKeys.set(appSecret, keys);
  }
  let key = keys.get(kind);
  if (!key) {
    key = createHmac('sha256', appSecret).update(`repo402/token/${kind}`).digest();
    keys.set(kind, key);
  }
  return key;
}

function mac(key: Buffer, kind: string, body: string): Buffer {
  return createHmac('sha256', key).update(`${kind}.${body}`).digest();
}

export function signToken(appSecret: Buffer, kind: string, payload: unknown): string {
  const body = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
  return `${kind}.${body}.${mac(keyFor(appSecret, kind), kind, body).toString('base64url')}`;
}

/** The payload when the token is of `kind`, untampered and well formed; otherwise undefined. */
export function verifyToken<T>(
  appSecret: Buffer,
  kind: string,
  token: string,
  shape: z.ZodType<T>,
): T | undefined {
  if (token.length > 2048) return undefined;
  const parts = token.split('.');
  if (parts.length !== 3 || parts[0] !== kind) return undefined;
  const [, body, signature] = parts as [string, string, string];
  if (!/^[A-Za-z0-9_-]+$/.test(body) || !/^[A-Za-z0-9_-]{43}$/.test(signature)) return undefined;
  const expected = mac(keyFor(appSecret, kind), kind, body);
  if (!timingSafeEqual(expected, Buffer.from(signature, 'base64url'))) return undefined;
  try {
    const parsed = shape.safeParse(JSON.parse(Buffer.from(body, 'base64url').toString('utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
