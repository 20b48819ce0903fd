import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import type { AppContext } from '../context.js';
import type { Db } from '../db/connect.js';
import { AppError } from '../platform/errors.js';
import { sha256Hex } from '../platform/tokens.js';
import {
  deleteExpiredIdempotencyRecord,
  deleteIdempotencyRecordsExpiredBy,
  findIdempotencyRecord,
  insertIdempotencyRecord,
} from './store.js';

export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;
export const IDEMPOTENCY_HEADER = 'idempotency-key';

/** One `Idempotency-Key` applied to one route with one request body. */
export interface IdempotentRequest {
  route: string;
  key: string;
  requestHash: string;
}

export interface StoredResponse {
  statusCode: number;
  body: unknown;
}

export function idempotentRequest(route: string, key: string, body: unknown): IdempotentRequest {
  return { route, key, requestHash: sha256Hex(canonicalJson(body)) };
}

/** Thrown inside a transaction when another request with the same key committed first. */
export class IdempotencyConflict extends Error {
  constructor() {
    super('Idempotency-Key already recorded');
    this.name = 'IdempotencyConflict';
  }
}

/**
 * The stored response for this key, if one was recorded in the last 24 hours. The same key with a
 * different body is `400 invalid_request` naming the `Idempotency-Key` header.
 */
export async function findReplay(
  ctx: Pick<AppContext, 'database' | 'clock' | 'appSecret'>,
  request: IdempotentRequest,
): Promise<StoredResponse | undefined> {
  const db = ctx.database.db;
  const keyHash = hashKey(request);
  const now = ctx.clock.now();
  const row = await findIdempotencyRecord(db, keyHash);
  if (!row) return undefined;
  if (row.expiresAt <= now) {
    await deleteExpiredIdempotencyRecord(db, keyHash, now);
    return undefined;
  }
  if (row.requestHash !== request.requestHash) {
    throw AppError.invalid(
      [{ field: 'Idempotency-Key', reason: 'already used with a different request body' }],
      'This Idempotency-Key was used with a different request; use a new key for a new request',
    );
  }
  let sealed: string;
  try {
    sealed = unseal(ctx.appSecret, request, row.responseSealed);
  } catch {
    // Sealed under the secret in force before APP_SECRET was rotated: the request took effect, but
    // its response (which held a credential) is gone for good, and doing it again would conflict.
    throw AppError.invalid(
      [
        {
          field: 'Idempotency-Key',
          reason: 'its response cannot be replayed after the server secret changed',
        },
      ],
      'This Idempotency-Key was used and its request done already; the stored response cannot be replayed since the server secret was rotated',
    );
  }
  return { statusCode: row.statusCode, body: JSON.parse(sealed) };
}

/**
 * Records the response in the caller's transaction, so it exists exactly when the effects do.
 * Throws IdempotencyConflict when another request with this key committed first.
 */
export async function recordResponse(
  db: Db,
  ctx: Pick<AppContext, 'appSecret'>,
  request: IdempotentRequest,
  response: StoredResponse,
  at: Date,
): Promise<void> {
  await deleteIdempotencyRecordsExpiredBy(db, at);
  const inserted = await insertIdempotencyRecord(db, {
    keyHash: hashKey(request),
    requestHash: request.requestHash,
    statusCode: response.statusCode,
    responseSealed: seal(ctx.appSecret, request, JSON.stringify(response.body)),
    createdAt: at,
    expiresAt: new Date(at.getTime() + IDEMPOTENCY_WINDOW_MS),
  });
  if (!inserted) throw new IdempotencyConflict();
}

function hashKey(request: Pick<IdempotentRequest, 'route' | 'key'>): string {
  return sha256Hex(`${request.route}\n${request.key}`);
}

/**
 * The stored response carries an API key. It is encrypted under a key derived from the app secret
 * and the Idempotency-Key, which is stored only hashed: the table alone reveals no credential.
 */
function sealingKey(appSecret: Buffer, request: IdempotentRequest): Buffer {
  return createHmac('sha256', appSecret).update(`idempotency\n${request.route}\n${request.key}`).digest();
}

function seal(appSecret: Buffer, request: IdempotentRequest, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealingKey(appSecret, request), iv);
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
}

function unseal(appSecret: Buffer, request: IdempotentRequest, sealed: string): string {
  const raw = Buffer.from(sealed, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', sealingKey(appSecret, request), raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
}

/** JSON with object keys sorted, so the same body always hashes the same. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}
