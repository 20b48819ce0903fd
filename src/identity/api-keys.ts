import type { AppContext } from '../context.js';
import type { Db } from '../db/connect.js';
import { AppError } from '../platform/errors.js';
import { newSecret, sha256Hex } from '../platform/tokens.js';
import { CURRENT_SCOPES, type Scope } from './scopes.js';
import { findLiveKey, insertApiKey, revokeKey, revokeLiveKeys } from './store.js';

export const API_KEY_PREFIX = 'r402_';
/** `r402_` and 256 random bits in base64url. */
const API_KEY_PATTERN = /^r402_[A-Za-z0-9_-]{43}$/;
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;

export type ApiKeyKind = 'agent' | 'session';

export interface IssuedApiKey {
  id: string;
  /** The secret itself: returned to the caller once, never stored. */
  apiKey: string;
  kind: ApiKeyKind;
  scopes: string[];
  createdAt: Date;
  expiresAt: Date | null;
}

/** The caller a valid bearer key identifies. */
export interface AuthenticatedCreator {
  id: string;
  handle: string;
  key: { id: string; kind: ApiKeyKind; scopes: string[]; expiresAt: Date | null };
}

/**
 * A new key for `creatorId`. Agent keys carry every current scope and do not expire; session keys
 * expire after 12 hours. `scopes` is for keys issued under an older scope list.
 */
export async function issueApiKey(
  db: Db,
  input: { creatorId: string; kind: ApiKeyKind; at: Date; scopes?: readonly string[] },
): Promise<IssuedApiKey> {
  const apiKey = newSecret(API_KEY_PREFIX);
  const expiresAt = input.kind === 'session' ? new Date(input.at.getTime() + SESSION_TTL_MS) : null;
  const row = await insertApiKey(db, {
    creatorId: input.creatorId,
    kind: input.kind,
    keyHash: sha256Hex(apiKey),
    scopes: [...(input.scopes ?? CURRENT_SCOPES)],
    createdAt: input.at,
    expiresAt,
  });
  return { id: row.id, apiKey, kind: row.kind, scopes: row.scopes, createdAt: row.createdAt, expiresAt };
}

/** What a rotation revoked: the keys that still worked until it. */
export interface RevokedKeys {
  agentKeys: number;
  webSessions: number;
}

/**
 * Rotation, the answer to a leaked key: revokes every live key of the creator, agent keys and web
 * session keys alike, and issues one agent key with every current scope. Run it in one
 * transaction holding the creator's row lock, so no key issued concurrently outlives it.
 */
export async function replaceAllKeys(
  db: Db,
  creatorId: string,
  at: Date,
): Promise<{ key: IssuedApiKey; revoked: RevokedKeys }> {
  const kinds = await revokeLiveKeys(db, creatorId, at);
  const key = await issueApiKey(db, { creatorId, kind: 'agent', at });
  return {
    key,
    revoked: {
      agentKeys: kinds.filter((kind) => kind === 'agent').length,
      webSessions: kinds.filter((kind) => kind === 'session').length,
    },
  };
}

export function revokeApiKey(db: Db, keyId: string, at: Date): Promise<void> {
  return revokeKey(db, keyId, at);
}

/**
 * The creator behind an `Authorization: Bearer` value. The key is looked up by its SHA-256, so no
 * secret is ever compared byte by byte in our code (nothing to time). Missing, malformed, unknown,
 * revoked and expired keys are all `401 invalid_key`.
 */
export async function authenticateApiKey(
  ctx: Pick<AppContext, 'database' | 'clock'>,
  authorization: string | undefined,
): Promise<AuthenticatedCreator> {
  if (!authorization) throw invalidKey('Authorization: Bearer <API_KEY> is missing');
  const match = /^Bearer +(\S+) *$/i.exec(authorization);
  if (!match || !API_KEY_PATTERN.test(match[1]!)) throw invalidKey('The bearer key is malformed');
  const row = await findLiveKey(ctx.database.db, sha256Hex(match[1]!), ctx.clock.now());
  if (!row) throw invalidKey('The key is unknown, revoked or expired');
  return {
    id: row.creatorId,
    handle: row.handle,
    key: { id: row.keyId, kind: row.kind, scopes: row.scopes, expiresAt: row.expiresAt },
  };
}

/** `403 insufficient_scope` unless the key carries `scope`. */
export function assertScope(creator: AuthenticatedCreator, scope: Scope): void {
  if (!creator.key.scopes.includes(scope)) {
    throw new AppError('insufficient_scope', {
      message: `This key lacks the ${scope} scope; rotate it (POST /api/auth/rotate-key) for one with every current scope`,
    });
  }
}

function invalidKey(message: string): AppError {
  return new AppError('invalid_key', { message });
}
