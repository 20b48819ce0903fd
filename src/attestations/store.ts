import { and, asc, eq, gt, inArray, isNull, ne, sql } from 'drizzle-orm';
import type { Db } from '../db/connect.js';
import { attestationKeys, releaseAttestations } from '../db/schema/index.js';
import type { DsseEnvelope, EnvelopeSignature } from './envelope.js';

export type AttestationKeyRow = typeof attestationKeys.$inferSelect;

/**
 * Records the key as the signing key from `at` on; the first time a key is recorded, every other
 * open window closes at `at`. Returns the key's row (a closed window when it was retired).
 */
export async function openKeyWindow(
  db: Db,
  key: { keyid: string; publicKey: string },
  at: Date,
): Promise<AttestationKeyRow> {
  const inserted = await db
    .insert(attestationKeys)
    .values({ ...key, notBefore: at })
    .onConflictDoNothing()
    .returning();
  if (inserted.length > 0) {
    await db
      .update(attestationKeys)
      .set({ notAfter: at })
      .where(and(isNull(attestationKeys.notAfter), ne(attestationKeys.keyid, key.keyid)));
    return inserted[0]!;
  }
  const [row] = await db.select().from(attestationKeys).where(eq(attestationKeys.keyid, key.keyid));
  return row!;
}

/**
 * Every key, in the order they were put in use: retired keys by when their window closed, then the
 * key signing now. (Not by `not_before`: re-signing moves a key's back over older statements.)
 */
export function allKeys(db: Db): Promise<AttestationKeyRow[]> {
  return db
    .select()
    .from(attestationKeys)
    .orderBy(
      sql`${attestationKeys.notAfter} asc nulls last`,
      asc(attestationKeys.notBefore),
      asc(attestationKeys.keyid),
    );
}

/**
 * Moves the key's `not_before` back to `at` when it is later: a key that re-signs a statement
 * vouches for that statement's time (`attested_at`), and verifiers check the key's window against it.
 */
export async function extendKeyWindowBack(db: Db, keyid: string, at: Date): Promise<void> {
  await db
    .update(attestationKeys)
    .set({ notBefore: at })
    .where(and(eq(attestationKeys.keyid, keyid), gt(attestationKeys.notBefore, at)));
}

/** The earliest statement time (`attested_at`) among the attestations `keyid` has signed. */
export async function earliestStatementSignedBy(db: Db, keyid: string): Promise<Date | undefined> {
  const [row] = await db
    .select({
      ms: sql<
        number | string | null
      >`(extract(epoch from min(((${releaseAttestations.payload})::jsonb #>> '{predicate,attested_at}')::timestamptz)) * 1000)::float8`,
    })
    .from(releaseAttestations)
    .where(sql`${releaseAttestations.signatures} @> ${JSON.stringify([{ keyid }])}::jsonb`);
  return row?.ms == null ? undefined : new Date(Math.round(Number(row.ms)));
}

/** Stores the release's attestation unless it has one (a retried job): the first one stays. */
export async function insertAttestation(
  db: Db,
  releaseId: string,
  envelope: DsseEnvelope,
  at: Date,
): Promise<void> {
  await db
    .insert(releaseAttestations)
    .values({
      releaseId,
      payloadType: envelope.payloadType,
      payload: Buffer.from(envelope.payload, 'base64').toString('utf8'),
      signatures: envelope.signatures,
      createdAt: at,
    })
    .onConflictDoNothing();
}

function envelopeOf(row: typeof releaseAttestations.$inferSelect): DsseEnvelope {
  return {
    payloadType: row.payloadType,
    payload: Buffer.from(row.payload, 'utf8').toString('base64'),
    signatures: row.signatures as EnvelopeSignature[],
  };
}

export async function findAttestation(db: Db, releaseId: string): Promise<DsseEnvelope | undefined> {
  const [row] = await db
    .select()
    .from(releaseAttestations)
    .where(eq(releaseAttestations.releaseId, releaseId));
  return row && envelopeOf(row);
}

/** A page of attestations, by release id after `afterId`, that `keyid` has not signed. */
export async function attestationsUnsignedBy(db: Db, keyid: string, afterId: string | null, limit: number) {
  const rows = await db
    .select()
    .from(releaseAttestations)
    .where(
      and(
        sql`not (${releaseAttestations.signatures} @> ${JSON.stringify([{ keyid }])}::jsonb)`,
        afterId ? gt(releaseAttestations.releaseId, afterId) : undefined,
      ),
    )
    .orderBy(asc(releaseAttestations.releaseId))
    .limit(limit);
  return rows.map((row) => ({ releaseId: row.releaseId, envelope: envelopeOf(row) }));
}

/** Adds a signature; the statement is untouched (the table's trigger refuses anything else). */
export async function appendSignature(
  db: Db,
  releaseId: string,
  signature: EnvelopeSignature,
): Promise<void> {
  await db
    .update(releaseAttestations)
    .set({ signatures: sql`${releaseAttestations.signatures} || ${JSON.stringify([signature])}::jsonb` })
    .where(
      and(
        eq(releaseAttestations.releaseId, releaseId),
        sql`not (${releaseAttestations.signatures} @> ${JSON.stringify([{ keyid: signature.keyid }])}::jsonb)`,
      ),
    );
}

/** Those of `releaseIds` that have an attestation. */
export async function attestedReleaseIds(db: Db, releaseIds: string[]): Promise<Set<string>> {
  if (releaseIds.length === 0) return new Set();
  const rows = await db
    .select({ id: releaseAttestations.releaseId })
    .from(releaseAttestations)
    .where(inArray(releaseAttestations.releaseId, releaseIds));
  return new Set(rows.map((row) => row.id));
}
