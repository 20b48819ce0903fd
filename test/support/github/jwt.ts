import { createPublicKey, generateKeyPair, type KeyObject, verify } from 'node:crypto';
import { promisify } from 'node:util';

const generate = promisify(generateKeyPair);

export interface AppKeys {
  /** PKCS#1, the format GitHub hands out when an App's private key is generated. */
  privateKeyPem: string;
  publicKey: KeyObject;
}

export async function createAppKeys(): Promise<AppKeys> {
  const { privateKey } = await generate('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  });
  return { privateKeyPem: privateKey, publicKey: createPublicKey(privateKey) };
}

/**
 * GitHub's own messages. @octokit/auth-app matches the three time-claim messages to detect clock
 * skew and retries with its clock corrected by the response's Date header, so they must be exact.
 */
export const JWT_MESSAGES = {
  undecodable: 'A JSON web token could not be decoded',
  expTooFar: "'Expiration time' claim ('exp') is too far in the future",
  expired:
    "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires",
  issuedInFuture:
    "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued",
} as const;

const MAX_LIFETIME_SECONDS = 600;
/** How far ahead of our clock `iat` may be before GitHub calls it a time in the future. */
const IAT_LEEWAY_SECONDS = 60;

/** Checks an App JWT as GitHub does: RS256 by the App's key, `iss` the app id, a short life. */
export function checkAppJwt(
  jwt: string,
  appId: number,
  publicKey: KeyObject,
  nowSeconds: number,
): { ok: true } | { ok: false; message: string } {
  const parts = jwt.split('.');
  if (parts.length !== 3) return { ok: false, message: JWT_MESSAGES.undecodable };
  const [headerPart, payloadPart, signaturePart] = parts as [string, string, string];
  const header = parseJson(headerPart);
  const claims = parseJson(payloadPart);
  if (!header || !claims || header.alg !== 'RS256') return { ok: false, message: JWT_MESSAGES.undecodable };
  const signed = verify(
    'sha256',
    Buffer.from(`${headerPart}.${payloadPart}`),
    publicKey,
    Buffer.from(signaturePart, 'base64url'),
  );
  if (!signed || String(claims.iss) !== String(appId))
    return { ok: false, message: JWT_MESSAGES.undecodable };
  const { iat, exp } = claims;
  if (!Number.isInteger(iat) || (iat as number) > nowSeconds + IAT_LEEWAY_SECONDS) {
    return { ok: false, message: JWT_MESSAGES.issuedInFuture };
  }
  if (typeof exp !== 'number' || exp <= nowSeconds) return { ok: false, message: JWT_MESSAGES.expired };
  if (exp > nowSeconds + MAX_LIFETIME_SECONDS || exp - (iat as number) > MAX_LIFETIME_SECONDS) {
    return { ok: false, message: JWT_MESSAGES.expTooFar };
  }
  return { ok: true };
}

function parseJson(part: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
