/**
 * The one table of SPEC.md's 32 error codes. Every error body, the OpenAPI error responses and
 * the /docs/errors page are generated from it, so a code cannot drift between them.
 */

export type ErrorGroup = 'Payment' | 'Listing' | 'Identity' | 'Limits' | 'General';

export interface ErrorSpec {
  status: number;
  group: ErrorGroup;
  meaning: string;
  action: string;
}

/**
 * What repo402 sells of a listing, in the one sentence every buyer-facing text uses (SKILL.md, the
 * buying guide, the 402's instructions, the `not_entitled` advice and the error reference).
 */
export const VERSIONS_SOLD =
  'Only the newest release whose scan passed is sold; a wallet re-fetches any version it owns, free, forever; an older version cannot be bought.';

export const ERRORS = {
  insufficient_balance: {
    status: 402,
    group: 'Payment',
    meaning: 'Payer lacks enough USDC for the price',
    action: 'Fund the payer on the named network and retry',
  },
  expired_authorization: {
    status: 402,
    group: 'Payment',
    meaning: 'Authorization expired',
    action: 'Request the resource again for a fresh 402 and sign it',
  },
  replay: {
    status: 409,
    group: 'Payment',
    meaning: 'Authorization already used',
    action: 'Re-fetch; the existing purchase is returned',
  },
  settlement_pending: {
    status: 402,
    group: 'Payment',
    meaning: 'Verified but not yet settled; access only after settlement',
    action: 'Retry with the same authorization',
  },
  settlement_timeout: {
    status: 504,
    group: 'Payment',
    meaning: 'Settlement did not confirm in time',
    action: 'Retry with the same authorization; it is not consumed',
  },
  authorization_mismatch: {
    status: 400,
    group: 'Payment',
    meaning: 'Authorization does not match listing, version or amount',
    action: 'Take a fresh 402',
  },
  price_changed: {
    status: 409,
    group: 'Payment',
    meaning: 'Price changed since the quote; a fresh 402 is attached',
    action: 'Sign the fresh 402',
  },
  sanctioned_counterparty: {
    status: 403,
    group: 'Payment',
    meaning: 'Address on a sanctions list',
    action: 'No retry succeeds',
  },
  listing_not_ready: {
    status: 409,
    group: 'Listing',
    meaning: 'Listing cannot go live yet',
    action: 'The `blocking` array names what is missing; fix and publish again',
  },
  licence_block: {
    status: 409,
    group: 'Listing',
    meaning: 'No resale-compatible licence',
    action: 'No longer returned; a missing or unrecognised licence does not block publishing or selling',
  },
  scan_failed: {
    status: 409,
    group: 'Listing',
    meaning: 'Security scan failed for this release',
    action: 'Read `scan_report` on GET /api/listings/{id}; fix in the repository and cut a new version',
  },
  version_exists: {
    status: 409,
    group: 'Listing',
    meaning: 'Version already exists',
    action: 'Tags are immutable; cut a new release',
  },
  description_missing: {
    status: 409,
    group: 'Listing',
    meaning: 'Description and trigger hint required before publishing',
    action: 'PATCH both, then publish',
  },
  retired: {
    status: 410,
    group: 'Listing',
    meaning: 'Listing no longer sold',
    action: 'Holders can still fetch every owned version',
  },
  not_entitled: {
    status: 403,
    group: 'Listing',
    meaning: 'Wallet does not own that version',
    action: `${VERSIONS_SOLD} Sign with the wallet that owns the version, or buy the version on sale: \`GET /api/r/{owner}/{slug}\` quotes its price`,
  },
  derivative_of: {
    status: 409,
    group: 'Listing',
    meaning: 'Artifact overlaps an existing listing by 90% or more',
    action: 'It cannot be published',
  },
  public_repo: {
    status: 422,
    group: 'Listing',
    meaning: 'Only private repositories can be listed',
    action: 'Make the repository private, then create the listing again',
  },
  invalid_key: {
    status: 401,
    group: 'Identity',
    meaning: 'Key missing, malformed or revoked',
    action:
      'Check the bearer header, or rotate the agent key with a wallet signature; sign in again for an expired session key',
  },
  insufficient_scope: {
    status: 403,
    group: 'Identity',
    meaning: "Key lacks the route's scope",
    action: 'Rotate the key to one with the scope',
  },
  step_up_required: {
    status: 403,
    group: 'Identity',
    meaning: 'Needs a fresh signature from the bound payout address',
    action: 'Sign a fresh challenge and send it as `step_up`',
  },
  terms_version_stale: {
    status: 409,
    group: 'Identity',
    meaning: 'Accepted terms version is not current',
    action: 'Fetch GET /api/terms and accept its version',
  },
  payout_address_unverified: {
    status: 400,
    group: 'Identity',
    meaning: 'Payout address not proved by a valid signed challenge',
    action: 'Get a challenge with purpose `address_proof`, sign, resend as `address_proof`',
  },
  invite_required: {
    status: 403,
    group: 'Identity',
    meaning: 'Invite code required for API registration',
    action: 'Supply an invite code',
  },
  invalid_signature: {
    status: 401,
    group: 'Identity',
    meaning: 'Wallet signature missing, malformed, expired or used',
    action: 'Take a new challenge',
  },
  rate_limited: {
    status: 429,
    group: 'Limits',
    meaning: 'Too many requests',
    action: 'Wait `retry_after_seconds`; the window is fixed, not sliding',
  },
  repo_too_large: {
    status: 413,
    group: 'Limits',
    meaning: 'The repository exceeds the cap of 200 MB or 20,000 files',
    action: 'Trim or split the listing',
  },
  too_many_unpublished: {
    status: 409,
    group: 'Limits',
    meaning: 'Maximum number of unpublished listings reached',
    action: 'Publish or retire a draft',
  },
  blocked_jurisdiction: {
    status: 451,
    group: 'General',
    meaning: "Unavailable in the request's jurisdiction",
    action: 'None',
  },
  paused: {
    status: 503,
    group: 'General',
    meaning: 'Temporarily unavailable',
    action: 'Try again shortly',
  },
  invalid_request: {
    status: 400,
    group: 'General',
    meaning: 'Body or parameters did not validate',
    action: '`details.issues` names each field and reason',
  },
  not_found: {
    status: 404,
    group: 'General',
    meaning: 'No such listing, version or resource',
    action: 'Check owner, slug, version; drafts are not readable by URL',
  },
  internal: {
    status: 500,
    group: 'General',
    meaning: 'Server fault',
    action: 'Retry; the request id in the response headers identifies it',
  },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERRORS;

export const ERROR_CODES = Object.keys(ERRORS) as ErrorCode[];

export interface Issue {
  field: string;
  reason: string;
}

export interface ErrorBody {
  code: ErrorCode;
  message: string;
  docs_url: string;
  details?: Record<string, unknown>;
  retry_after_seconds?: number;
}

export interface AppErrorOptions {
  message?: string;
  details?: Record<string, unknown>;
  /** Only for `rate_limited`. */
  retryAfterSeconds?: number;
  /** Extra response headers, for example `retry-after` or `PAYMENT-REQUIRED`. */
  headers?: Record<string, string>;
  cause?: unknown;
}

/** A failure the caller should see as the spec's error body. Throw it from any layer. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details?: Record<string, unknown>;
  readonly retryAfterSeconds?: number;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, options: AppErrorOptions = {}) {
    // An AppError is an expected outcome (a 404, a 402, a 429), not a bug: skip the stack capture,
    // which dominates the cost of these hot paths. A wrapped fault keeps its own stack in `cause`.
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(options.message ?? ERRORS[code].meaning, { cause: options.cause });
    Error.stackTraceLimit = stackTraceLimit;
    this.name = 'AppError';
    this.code = code;
    this.status = ERRORS[code].status;
    this.details = options.details;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.headers = options.headers ?? {};
    // SPEC: every 429 carries `retry-after` as well as the body's retry_after_seconds.
    if (code === 'rate_limited') {
      this.headers['retry-after'] ??= String(options.retryAfterSeconds ?? 1);
    }
  }

  /** `400 invalid_request` naming each offending field. */
  static invalid(issues: Issue[], message = 'The request did not validate'): AppError {
    return new AppError('invalid_request', { message, details: { issues } });
  }
}

/** Message parts joined as sentences: a part that does not end a sentence gets its full stop. */
export function sentences(...parts: string[]): string {
  return parts.map((part) => (/[.!?]$/.test(part) ? part : `${part}.`)).join(' ');
}

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}

export function docsUrl(baseUrl: string, code: ErrorCode): string {
  return `${baseUrl}/docs/errors#${code}`;
}

export function errorBody(baseUrl: string, error: AppError): ErrorBody {
  const body: ErrorBody = {
    code: error.code,
    message: error.message,
    docs_url: docsUrl(baseUrl, error.code),
  };
  if (error.details !== undefined) body.details = error.details;
  if (error.code === 'rate_limited') body.retry_after_seconds = error.retryAfterSeconds ?? 1;
  return body;
}
