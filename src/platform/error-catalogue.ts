/**
 * The one table of the error codes: SPEC.md's 32, and `release_yanked` and `suspended` (docs/DECISIONS.md D-160). Every error body, the OpenAPI error responses, the
 * /docs/errors page and the creator app's messages are generated from it, so a code cannot drift
 * between them. Data only: the browser bundle takes it as it is.
 */

export type ErrorGroup = 'Payment' | 'Listing' | 'Identity' | 'Limits' | 'General';

export interface ErrorSpec {
  status: number;
  group: ErrorGroup;
  meaning: string;
  /** What a program does about it, as the API's docs and bodies say. */
  action: string;
  /**
   * What a person using the creator app is told: what happened and which control to use, never a
   * route or a field name. `{…}` names a detail the app fills in.
   */
  page: string;
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
    page: 'The paying wallet does not hold enough USDC for this price. Add USDC to it and try again.',
  },
  expired_authorization: {
    status: 402,
    group: 'Payment',
    meaning: 'Authorization expired',
    action: 'Request the resource again for a fresh 402 and sign it',
    page: 'That payment authorization, or download link, has expired. Start again for a fresh one.',
  },
  replay: {
    status: 409,
    group: 'Payment',
    meaning: 'Authorization already used',
    action: 'Re-fetch; the existing purchase is returned',
    page: 'That payment was already used. What it bought is in your purchases.',
  },
  settlement_pending: {
    status: 402,
    group: 'Payment',
    meaning: 'Verified but not yet settled; access only after settlement',
    action: 'Retry with the same authorization',
    page: 'The payment is on its way to the chain. Wait a moment and try again; nothing is charged twice.',
  },
  settlement_timeout: {
    status: 504,
    group: 'Payment',
    meaning: 'Settlement did not confirm in time',
    action: 'Retry with the same authorization; it is not consumed',
    page: 'The payment did not confirm in time. Try again in a moment; nothing is charged twice.',
  },
  authorization_mismatch: {
    status: 400,
    group: 'Payment',
    meaning: 'Authorization does not match listing, version or amount',
    action: 'Take a fresh 402',
    page: 'The payment does not match what is on sale. Start again to be quoted afresh.',
  },
  price_changed: {
    status: 409,
    group: 'Payment',
    meaning: 'Price changed since the quote; a fresh 402 is attached',
    action: 'Sign the fresh 402',
    page: 'The price changed while you were paying. Check the new price and pay again.',
  },
  sanctioned_counterparty: {
    status: 403,
    group: 'Payment',
    meaning: 'Address on a sanctions list',
    action: 'No retry succeeds',
    page: 'This address cannot be used here.',
  },
  listing_not_ready: {
    status: 409,
    group: 'Listing',
    meaning: 'Listing cannot go live yet',
    action: 'The `blocking` array names what is missing; fix and publish again',
    page: 'This listing is not ready to publish yet: {blocking}.',
  },
  licence_block: {
    status: 409,
    group: 'Listing',
    meaning: 'No resale-compatible licence',
    action: 'No longer returned; a missing or unrecognised licence does not block publishing or selling',
    page: 'This listing needs a licence that allows resale.',
  },
  scan_failed: {
    status: 409,
    group: 'Listing',
    meaning: 'Security scan failed for this release',
    action: 'Read `scan_report` on GET /api/listings/{id}; fix in the repository and cut a new version',
    page: 'The newest release failed its security scan, so nothing can be published. Open its scan report in Releases below, fix the repository and push a new version tag.',
  },
  version_exists: {
    status: 409,
    group: 'Listing',
    meaning: 'Version already exists',
    action: 'Tags are immutable; cut a new release',
    page: 'That version was cut already, and versions never change. Push a new version tag instead.',
  },
  description_missing: {
    status: 409,
    group: 'Listing',
    meaning: 'Description and trigger hint required before publishing',
    action: 'PATCH both, then publish',
    page: 'Add a description and a “use it when” hint in Price and description, save, then publish.',
  },
  retired: {
    status: 410,
    group: 'Listing',
    meaning: 'Listing no longer sold',
    action: 'Holders can still fetch every owned version',
    page: 'This listing is retired: it can no longer be changed or sold. Buyers keep what they bought.',
  },
  not_entitled: {
    status: 403,
    group: 'Listing',
    meaning: 'Wallet does not own that version',
    action: `${VERSIONS_SOLD} Sign with the wallet that owns the version, or buy the version on sale: \`GET /api/r/{owner}/{slug}\` quotes its price`,
    page: 'This wallet does not own that version.',
  },
  derivative_of: {
    status: 409,
    group: 'Listing',
    meaning: 'Artifact overlaps an existing listing by 90% or more',
    action: 'It cannot be published',
    page: 'This repository overlaps another listing by 90% or more, so it cannot be published.',
  },
  release_yanked: {
    status: 410,
    group: 'Listing',
    meaning: 'The operator yanked this release; it is no longer sold or served',
    action:
      '`details.reason` says why. A holder of it is granted the newest passing release free: `GET /api/r/{owner}/{slug}` with its `X-Wallet-Signature`',
    page: 'This version was withdrawn by the operator of this service ({reason}). If you own it, the newest good version is yours free: get it from the listing.',
  },
  suspended: {
    status: 403,
    group: 'Listing',
    meaning: 'The operator suspended this listing or its creator',
    action:
      '`details.reason` says why. Nothing is sold while it lasts; holders still re-fetch the versions they own that are not yanked',
    page: 'This has been suspended by the operator of this service: {reason}. Nothing can be bought, pushed or published until the operator lifts it.',
  },
  public_repo: {
    status: 422,
    group: 'Listing',
    meaning: 'Only private repositories can be listed',
    action: 'Make the repository private, then create the listing again',
    page: 'That GitHub repository is public. Make it private on GitHub, then create the listing again.',
  },
  invalid_key: {
    status: 401,
    group: 'Identity',
    meaning: 'Key missing, malformed or revoked',
    action:
      'Check the bearer header, or rotate the agent key with a wallet signature; sign in again for an expired session key',
    page: 'That key was not accepted: it may be mistyped, revoked or expired. Sign in again.',
  },
  insufficient_scope: {
    status: 403,
    group: 'Identity',
    meaning: "Key lacks the route's scope",
    action: 'Rotate the key to one with the scope',
    page: 'This key may not do that. Rotate it on the Account page for a key with every permission.',
  },
  step_up_required: {
    status: 403,
    group: 'Identity',
    meaning: 'Needs a fresh signature from the bound payout address',
    action: 'Sign a fresh challenge and send it as `step_up`',
    page: 'This change needs a fresh signature from your payout wallet. Approve the signature request in your wallet.',
  },
  terms_version_stale: {
    status: 409,
    group: 'Identity',
    meaning: 'Accepted terms version is not current',
    action: 'Fetch GET /api/terms and accept its version',
    page: 'The terms changed while you were reading them. Reload the page, read the new terms and accept them.',
  },
  payout_address_unverified: {
    status: 400,
    group: 'Identity',
    meaning: 'Payout address not proved by a valid signed challenge',
    action: 'Get a challenge with purpose `address_proof`, sign, resend as `address_proof`',
    page: 'The new payout address has to sign too. Approve the second signature request, from the new address, in your wallet.',
  },
  invite_required: {
    status: 403,
    group: 'Identity',
    meaning: 'Invite code required for API registration',
    action: 'Supply an invite code',
    page: 'Registration needs an invite code. Ask the operator of this service for one.',
  },
  invalid_signature: {
    status: 401,
    group: 'Identity',
    meaning: 'Wallet signature missing, malformed, expired or used',
    action: 'Take a new challenge',
    page: 'The signature was not accepted; it may have expired. Sign again.',
  },
  rate_limited: {
    status: 429,
    group: 'Limits',
    meaning: 'Too many requests',
    action: 'Wait `retry_after_seconds`; the window is fixed, not sliding',
    page: 'Too many attempts. Wait {seconds} and try again.',
  },
  repo_too_large: {
    status: 413,
    group: 'Limits',
    meaning: 'The repository exceeds the cap of 200 MB or 20,000 files',
    action: 'Trim or split the listing',
    page: 'The repository is over the limit of 200 MB or 20,000 files. Trim it or split it, then push a new version.',
  },
  too_many_unpublished: {
    status: 409,
    group: 'Limits',
    meaning: 'Maximum number of unpublished listings reached',
    action: 'Publish or retire a draft',
    page: 'You already have 3 unpublished listings, the most allowed. Publish or retire one first.',
  },
  blocked_jurisdiction: {
    status: 451,
    group: 'General',
    meaning: "Unavailable in the request's jurisdiction",
    action: 'None',
    page: 'This service is not available where you are.',
  },
  paused: {
    status: 503,
    group: 'General',
    meaning: 'Temporarily unavailable',
    action: 'Try again shortly',
    page: 'The service is paused for maintenance. Try again in a minute.',
  },
  invalid_request: {
    status: 400,
    group: 'General',
    meaning: 'Body or parameters did not validate',
    action: '`details.issues` names each field and reason',
    page: 'Some of what you entered needs changing: see the marked fields.',
  },
  not_found: {
    status: 404,
    group: 'General',
    meaning: 'No such listing, version or resource',
    action: 'Check owner, slug, version; drafts are not readable by URL',
    page: 'Not found: it may have been removed, or belong to another account.',
  },
  internal: {
    status: 500,
    group: 'General',
    meaning: 'Server fault',
    action: 'Retry; the request id in the response headers identifies it',
    page: 'Something went wrong on the server. Try again; if it keeps happening, tell the operator.',
  },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERRORS;

export const ERROR_CODES = Object.keys(ERRORS) as ErrorCode[];
