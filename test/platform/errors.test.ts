import { describe, expect, it } from 'vitest';
import { AppError, ERROR_CODES, ERRORS, errorBody } from '../../src/platform/errors.js';

// SPEC.md "Errors": the 32 codes and their statuses, and the two moderation added (docs/DECISIONS.md D-160),
// copied here so a change to the table is deliberate.
const SPEC_STATUSES: Record<string, number> = {
  insufficient_balance: 402,
  expired_authorization: 402,
  replay: 409,
  settlement_pending: 402,
  settlement_timeout: 504,
  authorization_mismatch: 400,
  price_changed: 409,
  sanctioned_counterparty: 403,
  listing_not_ready: 409,
  licence_block: 409,
  scan_failed: 409,
  version_exists: 409,
  description_missing: 409,
  retired: 410,
  not_entitled: 403,
  derivative_of: 409,
  public_repo: 422,
  release_yanked: 410,
  suspended: 403,
  invalid_key: 401,
  insufficient_scope: 403,
  step_up_required: 403,
  terms_version_stale: 409,
  payout_address_unverified: 400,
  invite_required: 403,
  invalid_signature: 401,
  rate_limited: 429,
  repo_too_large: 413,
  too_many_unpublished: 409,
  blocked_jurisdiction: 451,
  paused: 503,
  invalid_request: 400,
  not_found: 404,
  internal: 500,
};

describe('the error table', () => {
  it("has exactly SPEC.md's 32 codes and the 2 of moderation, with their statuses", () => {
    expect(ERROR_CODES).toHaveLength(34);
    expect(Object.fromEntries(ERROR_CODES.map((code) => [code, ERRORS[code].status]))).toEqual(SPEC_STATUSES);
  });

  it('gives every code a meaning and an action', () => {
    for (const code of ERROR_CODES) {
      expect(ERRORS[code].meaning.length).toBeGreaterThan(5);
      expect(ERRORS[code].action.length).toBeGreaterThan(3);
    }
  });
});

describe('errorBody', () => {
  it('has code, message and docs_url pointing at the code anchor', () => {
    expect(errorBody('https://x.test', new AppError('not_found'))).toEqual({
      code: 'not_found',
      message: ERRORS.not_found.meaning,
      docs_url: 'https://x.test/docs/errors#not_found',
    });
  });

  it('carries details.issues for invalid_request', () => {
    const body = errorBody('https://x.test', AppError.invalid([{ field: 'limit', reason: 'too big' }]));
    expect(body.details).toEqual({ issues: [{ field: 'limit', reason: 'too big' }] });
  });

  it('carries retry_after_seconds only on rate_limited', () => {
    expect(
      errorBody('https://x.test', new AppError('rate_limited', { retryAfterSeconds: 12 }))
        .retry_after_seconds,
    ).toBe(12);
    expect(errorBody('https://x.test', new AppError('paused')).retry_after_seconds).toBeUndefined();
  });
});
