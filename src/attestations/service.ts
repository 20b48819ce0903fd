import path from 'node:path';
import type { AppContext } from '../context.js';
import type { Db } from '../db/connect.js';
import { cacheSlot } from '../platform/cache/caches.js';
import { loadOrCreateSecretFile } from '../platform/secret-file.js';
import { countersign, type DsseEnvelope, signEnvelope } from './envelope.js';
import { publicKeyFromRaw, publicKeyPem, type SigningKey, signingKeyFromSeed } from './keys.js';
import { buildStatement, type ReleaseFacts } from './statement.js';
import {
  allKeys,
  appendSignature,
  attestationsUnsignedBy,
  attestedReleaseIds,
  earliestStatementSignedBy,
  extendKeyWindowBack,
  findAttestation,
  insertAttestation,
  openKeyWindow,
} from './store.js';
import { attestedAtOf, trustedKeysOf, verifyAttestation } from './verify.js';

/**
 * The process's signing key, loaded once per context: ATTESTATION_KEY, else DATA_DIR/attestation-key.
 * Kept with the setting it came from, so a context whose configuration is replaced never signs
 * with the key it replaced.
 */
const signingKeySlot = cacheSlot(() => ({ from: '', key: undefined as Promise<SigningKey> | undefined }));

export function attestationSigningKey(ctx: Pick<AppContext, 'config' | 'caches'>): Promise<SigningKey> {
  const slot = ctx.caches.get(signingKeySlot);
  const from = ctx.config.attestationKey ?? path.join(ctx.config.dataDir, 'attestation-key');
  if (slot.key && slot.from === from) return slot.key;
  const loading = (async () => {
    const seed = ctx.config.attestationKey
      ? Buffer.from(ctx.config.attestationKey, 'hex')
      : await loadOrCreateSecretFile(from);
    return signingKeyFromSeed(seed);
  })();
  slot.from = from;
  slot.key = loading;
  // A failed load (an unreadable file) is tried again by the next caller, not remembered.
  loading.catch(() => {
    if (slot.key === loading) slot.key = undefined;
  });
  return loading;
}

/**
 * Opens the key's window on its first signature (closing its predecessor's); a key whose window
 * was closed never signs again.
 */
async function assertMaySign(db: Db, key: SigningKey, at: Date): Promise<void> {
  const window = await openKeyWindow(
    db,
    { keyid: key.keyid, publicKey: key.rawPublicKey.toString('base64url') },
    at,
  );
  if (window.notAfter !== null) {
    throw new Error(
      `the attestation key ${key.keyid} was retired at ${window.notAfter.toISOString()} and signs nothing more; configure the current ATTESTATION_KEY`,
    );
  }
}

/**
 * Signs the release's statement and stores the envelope, on `tx`: the caller's transaction that
 * records the release's verdict, so no release is ever shown final without its attestation. The
 * key's window opens on its first signature (closing its predecessor's); a key whose window was
 * closed never signs again. The envelope is verified before it is stored.
 */
export async function attestRelease(
  tx: Db,
  key: SigningKey,
  releaseId: string,
  facts: ReleaseFacts,
  at: Date,
): Promise<DsseEnvelope> {
  await assertMaySign(tx, key, at);
  const payload = Buffer.from(JSON.stringify(buildStatement(facts, at)), 'utf8');
  const envelope = signEnvelope(payload, key);
  const check = verifyAttestation(envelope, [key], { artifactSha256: facts.artifact?.sha256 });
  if (!check.ok) throw new Error(`a freshly signed attestation does not verify: ${check.reason}`);
  await insertAttestation(tx, releaseId, envelope, at);
  return envelope;
}

/** Those of `releaseIds` that have an attestation. */
export function attestedReleases(db: Db, releaseIds: string[]): Promise<Set<string>> {
  return attestedReleaseIds(db, releaseIds);
}

export function attestationOf(db: Db, releaseId: string): Promise<DsseEnvelope | undefined> {
  return findAttestation(db, releaseId);
}

export interface KeysDocument {
  keys: Array<{
    keyid: string;
    algorithm: 'ed25519';
    public_key: string;
    public_key_pem: string;
    not_before: string;
    not_after: string | null;
  }>;
}

/** Every key that ever signed, oldest first, with its window: old attestations keep verifying. */
export async function keysDocument(db: Db): Promise<KeysDocument> {
  const rows = await allKeys(db);
  return {
    keys: rows.map((row) => ({
      keyid: row.keyid,
      algorithm: 'ed25519' as const,
      public_key: row.publicKey,
      public_key_pem: publicKeyPem(publicKeyFromRaw(Buffer.from(row.publicKey, 'base64url'))),
      not_before: row.notBefore.toISOString(),
      not_after: row.notAfter?.toISOString() ?? null,
    })),
  };
}

const RESIGN_PAGE = 100;

/**
 * The operator's explicit re-signing after a rotation: the current key adds its signature to every
 * attestation it has not signed. The statements stay byte for byte what they were. The key's window
 * moves back over the statements it re-signs (in the same transaction as its signatures), since
 * verifiers check each signing key's window against the statement's `attested_at`.
 */
export async function resignAttestations(ctx: AppContext): Promise<{ keyid: string; signed: number }> {
  const key = await attestationSigningKey(ctx);
  const db = ctx.database.db;
  await assertMaySign(db, key, ctx.clock.now());
  // What this key re-signed before its window covered re-signed statements is covered now too.
  const earlier = await earliestStatementSignedBy(db, key.keyid);
  if (earlier) await extendKeyWindowBack(db, key.keyid, earlier);
  const trusted = trustedKeysOf(await keysDocument(db));
  let signed = 0;
  let after: string | null = null;
  for (;;) {
    const page = await attestationsUnsignedBy(db, key.keyid, after, RESIGN_PAGE);
    const signatures = page.map(({ releaseId, envelope }) => {
      // Only what an earlier key verifiably signed, within its window, is vouched for again.
      const check = verifyAttestation(envelope, trusted);
      if (!check.ok)
        throw new Error(`the attestation of release ${releaseId} does not verify: ${check.reason}`);
      return { releaseId, signature: countersign(envelope, key), attestedAt: attestedAtOf(check.statement)! };
    });
    if (signatures.length > 0) {
      const earliest = new Date(Math.min(...signatures.map((s) => s.attestedAt.getTime())));
      await db.transaction(async (tx) => {
        await extendKeyWindowBack(tx, key.keyid, earliest);
        for (const { releaseId, signature } of signatures) await appendSignature(tx, releaseId, signature);
      });
      signed += signatures.length;
    }
    if (page.length < RESIGN_PAGE) return { keyid: key.keyid, signed };
    after = page.at(-1)!.releaseId;
  }
}
