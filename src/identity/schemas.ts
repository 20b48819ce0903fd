import { type Address, getAddress, isAddress } from 'viem';
import { z } from 'zod';
import { singleLineText } from '../platform/text-fields.js';
import { isReservedHandle, NAME_MAX_LENGTH, NAME_MIN_LENGTH, NAME_PATTERN, NAME_RULE } from './handles.js';
import { IDEMPOTENCY_HEADER } from './idempotency.js';
import { CURRENT_SCOPES } from './scopes.js';

/**
 * A wallet address: 0x and 40 hex digits, all lower case or correctly checksummed (a mixed-case
 * typo is refused rather than silently accepted), normalised to its checksummed form.
 */
export const AddressSchema = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, 'expected 0x followed by 40 hex digits')
  .refine((value) => isAddress(value, { strict: true }), 'mixed-case address with a wrong checksum')
  .transform((value): Address => getAddress(value))
  .meta({ description: 'EVM address, lower case or EIP-55 checksummed' });

export const HandleSchema = z
  .string()
  .min(NAME_MIN_LENGTH, `at least ${NAME_MIN_LENGTH} characters`)
  .max(NAME_MAX_LENGTH, `at most ${NAME_MAX_LENGTH} characters`)
  .regex(NAME_PATTERN, NAME_RULE)
  .refine((value) => !isReservedHandle(value), 'reserved name')
  .meta({ description: `The creator's \`owner\` in URLs: ${NAME_RULE}; 3–39 characters` });

export const AbuseContactSchema = z
  .email('expected an e-mail address')
  .max(254)
  .meta({ description: 'E-mail address for abuse reports; changes are announced to the old one' });

export const CHALLENGE_PURPOSES = ['address_proof', 'step_up', 'rotate_key', 'wallet_ownership'] as const;
export const PurposeSchema = z.enum(CHALLENGE_PURPOSES);

/** Contents are checked by signature verification, which answers with the route's own code. */
export const SignedChallengeSchema = z
  .strictObject({
    nonce: singleLineText().max(128),
    signature: singleLineText().max(20_000).meta({ description: '0x-prefixed hex signature of `message`' }),
  })
  .meta({ id: 'SignedChallenge', description: 'A signature over the `message` of a challenge' });

export const ScopesSchema = z
  .array(z.string())
  .meta({ description: `Current scopes: ${CURRENT_SCOPES.join(', ')}` });

export const ChallengeQuerySchema = z.strictObject({
  address: AddressSchema.meta({ description: 'The address that will sign' }),
  purpose: PurposeSchema,
  new_payout_address: AddressSchema.optional().meta({
    description: 'Only with purpose step_up: the payout address this signature may bind, and no other',
  }),
});

export const ChallengeSchema = z
  .object({
    nonce: z.string(),
    purpose: PurposeSchema,
    address: z.string(),
    message: z.string().meta({ description: 'EIP-4361 message; sign it verbatim (EIP-191 personal_sign)' }),
    issued_at: z.iso.datetime(),
    expires_at: z.iso.datetime(),
  })
  .meta({ id: 'Challenge' });

export const PendingChangeSchema = z.object({
  field: z.enum(['payout_address', 'abuse_contact']),
  value: z.string(),
  requested_at: z.iso.datetime(),
  effective_at: z.iso.datetime().meta({ description: 'When the new value comes into force' }),
});

export const CreatorSchema = z
  .object({
    id: z.uuid(),
    handle: z.string(),
    payout_address: z.string().meta({ description: 'The payout address in force now' }),
    abuse_contact: z.string().meta({ description: 'The abuse contact in force now' }),
    accepted_terms_version: z.string(),
    created_at: z.iso.datetime(),
    pending_changes: z.array(PendingChangeSchema).meta({
      description: 'Requested changes not yet in force; the current values apply until `effective_at`',
    }),
  })
  .meta({ id: 'Creator' });

/** `Idempotency-Key` on registration. */
export const RegistrationHeadersSchema = z.looseObject({
  [IDEMPOTENCY_HEADER]: z.uuid('expected a UUID').optional().meta({
    description: 'The identical 201 replays for 24 hours; the same key with another body is refused',
  }),
});

export const CreateCreatorRequestSchema = z
  .strictObject({
    handle: HandleSchema,
    payout_address: AddressSchema,
    accepted_terms_version: singleLineText().max(64).meta({ description: 'The `version` of GET /api/terms' }),
    address_proof: SignedChallengeSchema.optional().meta({
      description: 'Signed `address_proof` challenge from `payout_address`; required',
    }),
    invite_code: singleLineText().max(200).optional().meta({ description: 'Required in this version' }),
    abuse_contact: AbuseContactSchema,
  })
  .meta({ id: 'CreateCreatorRequest' });

export const CreateCreatorResponseSchema = CreatorSchema.extend({
  api_key: z.string().meta({ description: 'Shown once; only its hash is kept' }),
  scopes: ScopesSchema,
}).meta({ id: 'CreateCreatorResponse' });

export const UpdateCreatorRequestSchema = z
  .strictObject({
    payout_address: AddressSchema.optional(),
    abuse_contact: AbuseContactSchema.optional(),
    step_up: SignedChallengeSchema.optional().meta({
      description:
        'Signed `step_up` challenge from the payout address in force; for a payout change it must be minted with `new_payout_address`',
    }),
    address_proof: SignedChallengeSchema.optional().meta({
      description: 'Signed `address_proof` challenge from the new payout address',
    }),
  })
  .meta({ id: 'UpdateCreatorRequest' });

export const UpdateCreatorResponseSchema = CreatorSchema.meta({ id: 'UpdateCreatorResponse' });

export const WalletProofSchema = z
  .strictObject({
    address: AddressSchema,
    nonce: singleLineText().max(128),
    signature: singleLineText().max(20_000),
  })
  .meta({ id: 'WalletProof', description: 'A signed challenge and the address that signed it' });

export const RotateKeyRequestSchema = WalletProofSchema.meta({ id: 'RotateKeyRequest' });

export const RotateKeyResponseSchema = z
  .object({
    api_key: z.string().meta({
      description: 'The new agent key, shown once; every other key of the creator is already revoked',
    }),
    handle: z.string(),
    scopes: ScopesSchema,
    created_at: z.iso.datetime(),
    revoked: z
      .object({
        agent_keys: z.number().int().nonnegative().meta({ description: 'Agent keys that worked until now' }),
        web_sessions: z
          .number()
          .int()
          .nonnegative()
          .meta({ description: 'Unexpired web session keys (signed-in browsers) that worked until now' }),
      })
      .meta({ description: 'What the rotation revoked: every key of the creator but the new one' }),
  })
  .meta({ id: 'RotateKeyResponse' });

export const WalletSessionRequestSchema = WalletProofSchema.meta({ id: 'WalletSessionRequest' });

export const WalletSessionResponseSchema = z
  .object({
    wallet_session: z.string().meta({
      description:
        'Send it as X-Wallet-Signature instead of a signed challenge, on every wallet route, until expires_at',
    }),
    address: z.string(),
    expires_at: z.iso.datetime(),
  })
  .meta({ id: 'WalletSession' });

export const SessionRequestSchema = WalletProofSchema.meta({ id: 'SessionRequest' });

export const SessionResponseSchema = z
  .object({
    api_key: z.string().meta({ description: 'A web session key, shown once' }),
    handle: z.string(),
    scopes: ScopesSchema,
    expires_at: z.iso.datetime(),
  })
  .meta({ id: 'SessionResponse' });
