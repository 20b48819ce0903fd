import { sql } from 'drizzle-orm';
import { check, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { at } from './columns.js';
import { releases } from './listings.js';

/**
 * Every Ed25519 key that has signed release attestations, kept for good so that old attestations
 * keep verifying after a rotation. `keyid` is the SHA-256 (hex) of the raw 32-byte public key.
 * A key signs from `not_before` until `not_after`; the configured key is the one open window, and
 * a new configured key closes the previous one when it first signs. A closed key never signs again.
 */
export const attestationKeys = pgTable(
  'attestation_keys',
  {
    keyid: text('keyid').primaryKey(),
    /** The raw 32-byte Ed25519 public key, base64url. */
    publicKey: text('public_key').notNull(),
    notBefore: at('not_before').notNull(),
    notAfter: at('not_after'),
  },
  (table) => [
    check(
      'attestation_keys_window',
      sql`${table.notAfter} is null or ${table.notAfter} >= ${table.notBefore}`,
    ),
  ],
);

/**
 * One release's attestation: a DSSE envelope around an in-toto Statement. `payload` is the exact
 * statement bytes (UTF-8 JSON) that were signed; it is written once, in the transaction that
 * records the release's verdict, and never changes (a trigger refuses it). `signatures` only grows:
 * re-signing with a newer key appends `{keyid, sig}` (sig base64, as DSSE's JSON form has it).
 */
export const releaseAttestations = pgTable('release_attestations', {
  releaseId: uuid('release_id')
    .primaryKey()
    .references(() => releases.id),
  payloadType: text('payload_type').notNull(),
  payload: text('payload').notNull(),
  signatures: jsonb('signatures').notNull(),
  createdAt: at('created_at').notNull(),
});
