import { z } from 'zod';

export const DsseEnvelopeSchema = z
  .object({
    payloadType: z.literal('application/vnd.in-toto+json'),
    payload: z.string().meta({
      description:
        'Base64 of the in-toto Statement v1 (JSON) exactly as signed; docs/ATTESTATIONS.md lists its fields',
    }),
    signatures: z
      .array(
        z.object({
          keyid: z.string().meta({
            description: 'SHA-256 (hex) of the raw Ed25519 public key; see /.well-known/repo402-keys.json',
          }),
          sig: z.string().meta({ description: 'Base64 Ed25519 signature over PAE(payloadType, payload)' }),
        }),
      )
      .min(1)
      .meta({
        description:
          'The first signature is the one made when the release was attested; a key rotation may add more, never change the statement',
      }),
  })
  .meta({
    id: 'DsseEnvelope',
    description: 'A DSSE envelope (JSON form) around the release’s in-toto Statement v1',
  });

export const AttestationKeysSchema = z
  .object({
    keys: z.array(
      z.object({
        keyid: z.string().meta({ description: 'SHA-256 (hex) of the raw public key' }),
        algorithm: z.literal('ed25519'),
        public_key: z.string().meta({ description: 'The raw 32-byte Ed25519 public key, base64url' }),
        public_key_pem: z
          .string()
          .meta({ description: 'The same key as a PEM SubjectPublicKeyInfo (for openssl)' }),
        not_before: z.iso.datetime().meta({
          description:
            'The earliest statement time (the predicate’s attested_at) the key vouches for: its first signature’s, or an older statement’s it re-signed',
        }),
        not_after: z.iso.datetime().nullable().meta({
          description:
            'When a newer key replaced it; null for the key signing now. Attestations it made stay valid. A verifier refuses a signature whose statement’s attested_at is outside not_before..not_after',
        }),
      }),
    ),
  })
  .meta({
    id: 'AttestationKeys',
    description: 'Every key that has signed release attestations, oldest first',
  });
