import type { PaymentRequirements } from '@x402/core/types';
import { VERSIONS_SOLD } from '../platform/errors.js';
import { SKILL_PATH } from '../platform/http/discovery-links.js';
import { formatMicroUsdc } from '../platform/money/money.js';
import { formatUsd } from '../platform/money/usd.js';
import type { UpdateChanges } from '../releases/service.js';
import type { ReleaseBody } from '../releases/views.js';
import type { Offer } from './offer.js';
import type { PaymentRail } from './rail.js';
import { resourceUrl } from './resource-url.js';

/** SPEC.md's payment-required body (HTTP 402) and the x402 requirements it carries. */

export const MAX_TIMEOUT_SECONDS = 300;

export interface PaymentRequiredBody {
  x402Version: 2;
  error?: string;
  resource: { url: string; description: string; mimeType: 'application/zip' };
  accepts: (PaymentRequirements & {
    maxAmountRequired: string;
    resource: string;
    description: string;
    mimeType: 'application/zip';
  })[];
  extra: {
    kind: 'new' | 'update';
    version: string;
    from?: string;
    to?: string;
    releases?: ReleaseBody[];
    changes?: UpdateChanges;
    manifest_url: string;
    scan_badge_url: string;
    listing_url: string;
    skill_url: string;
    mcp_url: string;
    instructions: string;
    update_price_micro: string;
    quote_id: string;
    valid_before: string;
  };
  extensions: { bazaar: unknown; quote: { quote_id: string } };
}

function describe(offer: Offer): string {
  const name = `${offer.owner}/${offer.slug}`;
  return offer.kind === 'update'
    ? `Update of ${name} from ${offer.fromVersion} to ${offer.version} (zip)`
    : `${name} ${offer.version} (zip)`;
}

/** The one requirement a buyer signs; rebuilt identically when the payment comes back. */
export function requirementsFor(rail: PaymentRail, offer: Offer): PaymentRequirements {
  return {
    scheme: 'exact',
    network: rail.network.caip2,
    asset: rail.asset,
    amount: formatMicroUsdc(offer.amountMicro),
    payTo: rail.payTo,
    maxTimeoutSeconds: MAX_TIMEOUT_SECONDS,
    extra: { name: rail.tokenDomain.name, version: rail.tokenDomain.version },
  };
}

/**
 * Discovery metadata (x402 bazaar) that clients echo back in the payment payload: the grant its
 * offer would give, with the version and kind on sale.
 */
export function bazaarFor(offer: Pick<Offer, 'version' | 'kind'>) {
  return {
    info: {
      input: { type: 'http', method: 'GET' },
      output: {
        type: 'json',
        example: {
          download_url: 'https://repo402.example/api/download/<token>',
          expires_at: '2026-01-01T00:05:00.000Z',
          version: offer.version,
          artifact_sha256: '<64 hex>',
          size_bytes: 12345,
          kind: offer.kind,
        },
      },
    },
    schema: BAZAAR_SCHEMA,
  };
}

const BAZAAR_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: {
    input: {
      type: 'object',
      properties: { type: { type: 'string', const: 'http' }, method: { type: 'string', enum: ['GET'] } },
      required: ['type', 'method'],
    },
    output: { type: 'object', properties: { type: { type: 'string' } }, required: ['type'] },
  },
  required: ['input'],
};

/** `accepts[0]` of the 402 (and of the discovery document): the requirement with its v1 aliases. */
export function acceptedOffer(
  baseUrl: string,
  rail: PaymentRail,
  offer: Offer,
): PaymentRequiredBody['accepts'][0] {
  const requirements = requirementsFor(rail, offer);
  return {
    ...requirements,
    maxAmountRequired: requirements.amount,
    resource: resourceUrl(baseUrl, offer.owner, offer.slug),
    description: describe(offer),
    mimeType: 'application/zip',
  };
}

/** The official x402 client's default cap per payment (`DEFAULT_MAX_AMOUNT_PER_PAYMENT` in @x402/core). */
const CLIENT_DEFAULT_CAP_MICRO = 1_000_000n;

/** The official client's spend-limit setting, named for the price being asked. */
export function spendLimitSentence(amountMicro: bigint): string {
  const price = `$${formatUsd(amountMicro)}`;
  return amountMicro > CLIENT_DEFAULT_CAP_MICRO
    ? `The official client refuses payments above $1.00 by default; this one is ${price}: pass spendControls: { maxAmountPerPayment: '${price}' } ` +
        "(or more) in the config of @x402/fetch's wrapFetchWithPaymentFromConfig or of x402Client.fromConfig, or call setSpendControls({ maxAmountPerPayment }) on your x402Client (its constructor takes no config)."
    : `This payment (${price}) is within the official client's default spend limit ($1.00, spendControls.maxAmountPerPayment).`;
}

/** `extra.instructions`: how to pay, in the terms of the transport that carried the 402. */
function instructionsFor(baseUrl: string, via: 'http' | 'mcp', amountMicro: bigint): string {
  const guide = `${spendLimitSentence(amountMicro)} ${VERSIONS_SOLD} Guide: ${baseUrl}${SKILL_PATH}`;
  if (via === 'mcp') {
    return (
      'This result is a paywall, not an error. To buy: sign an EIP-3009 TransferWithAuthorization for accepts[0] ' +
      "(an x402 v2 exact payment; npm install @x402/core @x402/evm viem: @x402/core/client's x402Client, registered with @x402/evm's ExactEvmScheme, " +
      'builds it with createPaymentPayload(this object); encodePaymentSignatureHeader from @x402/core/http turns it into the base64 string), then call the `purchase` tool again ' +
      'with the same owner and slug, `payment_signature` = the base64 payment payload and `quote_id` = extra.quote_id. ' +
      `The result is the grant (download_url, valid 5 minutes) once the payment settles. ${guide}`
    );
  }
  return (
    'This 402 is a paywall, not an error. To buy: sign an EIP-3009 TransferWithAuthorization for accepts[0] ' +
    '(an x402 v2 exact payment; @x402/fetch does it), then repeat this GET with the base64 payment payload in ' +
    `PAYMENT-SIGNATURE and extra.quote_id in X-Quote-Id. Access is granted once the payment settles. ${guide}`
  );
}

export function paymentRequiredBody(
  baseUrl: string,
  rail: PaymentRail,
  offer: Offer,
  quote: { id: string; expiresAt: Date },
  update: { releases: ReleaseBody[]; changes: UpdateChanges } | undefined,
  via: 'http' | 'mcp' = 'http',
): PaymentRequiredBody {
  const accepted = acceptedOffer(baseUrl, rail, offer);
  const url = accepted.resource;
  const description = accepted.description;
  const name = `${offer.owner}/${offer.slug}`;
  return {
    x402Version: 2,
    resource: { url, description, mimeType: 'application/zip' },
    accepts: [accepted],
    extra: {
      kind: offer.kind,
      version: offer.version,
      ...(offer.kind === 'update'
        ? {
            from: offer.fromVersion,
            to: offer.version,
            releases: update?.releases ?? [],
            changes: update?.changes,
          }
        : {}),
      manifest_url: `${baseUrl}/api/label/${name}`,
      scan_badge_url: `${baseUrl}/${name}#scan`,
      listing_url: `${baseUrl}/${name}`,
      skill_url: `${baseUrl}${SKILL_PATH}`,
      mcp_url: `${baseUrl}/api/mcp`,
      instructions: instructionsFor(baseUrl, via, offer.amountMicro),
      update_price_micro: formatMicroUsdc(offer.updatePriceMicro),
      quote_id: quote.id,
      valid_before: quote.expiresAt.toISOString(),
    },
    // x402 v2 clients echo `extensions` in the payment payload, so the quote comes back with an
    // unmodified client even when it cannot send X-Quote-Id.
    extensions: { bazaar: bazaarFor(offer), quote: { quote_id: quote.id } },
  };
}

/** Standard base64 of the JSON, for the `PAYMENT-REQUIRED` header. */
export function encodeHeaderJson(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64');
}
