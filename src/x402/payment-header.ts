import type { PaymentPayload } from '@x402/core/types';
import { type Address, type Hex, isErc6492Signature, parseErc6492Signature } from 'viem';
import { z } from 'zod';
import { AppError } from '../platform/errors.js';
import { parseClientJson } from '../platform/http/json-body.js';

/**
 * Decodes `PAYMENT-SIGNATURE`: standard base64 of an x402 v2 exact EVM payment payload. Anything
 * present but not decodable is `400 invalid_request`, never treated as absent (a silent 402).
 */

const MAX_HEADER_LENGTH = 16 * 1024;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const uint = z.string().regex(/^(0|[1-9][0-9]{0,77})$/);
const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/);

const PayloadSchema = z.object({
  x402Version: z.literal(2),
  resource: z.object({ url: z.string() }).passthrough().optional(),
  accepted: z
    .object({
      scheme: z.string(),
      network: z.string(),
      asset: z.string(),
      amount: z.string(),
      payTo: z.string(),
      maxTimeoutSeconds: z.number(),
      extra: z.record(z.string(), z.unknown()).optional(),
    })
    .passthrough(),
  payload: z.object({
    signature: z.string().regex(/^0x([0-9a-fA-F]{2})+$/),
    authorization: z.object({
      from: address,
      to: address,
      value: uint,
      validAfter: uint,
      validBefore: uint,
      nonce: z.string().regex(/^0x[0-9a-fA-F]{64}$/),
    }),
  }),
  extensions: z.record(z.string(), z.unknown()).optional(),
});

export interface Authorization {
  from: Address;
  to: Address;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  nonce: Hex;
}

export interface DecodedPayment {
  payload: PaymentPayload;
  authorization: Authorization;
}

export function decodePaymentSignature(header: string): DecodedPayment {
  const value = header.trim();
  if (!value || value.length > MAX_HEADER_LENGTH || !BASE64.test(value))
    throw malformed('is not standard base64');
  let json: unknown;
  try {
    json = parseClientJson(Buffer.from(value, 'base64').toString('utf8'));
  } catch {
    throw malformed('is not base64 of JSON');
  }
  const parsed = PayloadSchema.safeParse(json);
  if (!parsed.success) {
    throw malformed(
      `is not an x402 v2 exact EVM payment payload (${parsed.error.issues
        .slice(0, 3)
        .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
        .join('; ')})`,
    );
  }
  assertDecodableSignature(parsed.data.payload.signature as Hex);
  const auth = parsed.data.payload.authorization;
  // Lower case, not checksummed: every comparison and key lowercases, and a checksum is two Keccaks.
  return {
    payload: parsed.data as PaymentPayload,
    authorization: {
      from: auth.from.toLowerCase() as Address,
      to: auth.to.toLowerCase() as Address,
      value: BigInt(auth.value),
      validAfter: BigInt(auth.validAfter),
      validBefore: BigInt(auth.validBefore),
      nonce: auth.nonce.toLowerCase() as Hex,
    },
  };
}

/**
 * A signature marked as ERC-6492 (a smart wallet not yet deployed) must unwrap: one that does not
 * is no one's signature, refused here rather than thrown by whichever verifier meets it first.
 */
function assertDecodableSignature(signature: Hex): void {
  if (!isErc6492Signature(signature)) return;
  try {
    parseErc6492Signature(signature);
  } catch {
    throw new AppError('invalid_signature', {
      message: 'The payment signature is marked ERC-6492 but does not decode as one',
    });
  }
}

function malformed(reason: string): AppError {
  return AppError.invalid(
    [{ field: 'PAYMENT-SIGNATURE', reason }],
    `PAYMENT-SIGNATURE ${reason}; send the base64 x402 v2 payment payload for accepts[0] of the 402`,
  );
}
