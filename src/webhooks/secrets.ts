import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

/**
 * A subscription's signing secret, in the Standard Webhooks form (`whsec_` and base64 of 32 random
 * bytes). It must be read again to sign each delivery, so it is kept sealed (AES-256-GCM) under a
 * key derived from the app secret and the subscription's id, as the idempotency store keeps API
 * keys: the table alone reveals no secret, and a sealed value moved to another row does not open.
 */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

function sealingKey(appSecret: Buffer, subscriptionId: string): Buffer {
  return createHmac('sha256', appSecret).update(`webhook-secret\n${subscriptionId}`).digest();
}

export function sealSecret(appSecret: Buffer, subscriptionId: string, secret: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealingKey(appSecret, subscriptionId), iv);
  const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
}

export function unsealSecret(appSecret: Buffer, subscriptionId: string, sealed: string): string {
  const raw = Buffer.from(sealed, 'base64');
  const decipher = createDecipheriv(
    'aes-256-gcm',
    sealingKey(appSecret, subscriptionId),
    raw.subarray(0, 12),
  );
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
}
