/**
 * API key scopes (DESIGN.md item 4, plus `sales:read` for the creator's sales, ledger and payouts).
 * An agent key carries every scope current when it was issued, so a key issued before a scope
 * existed lacks it until the creator rotates the key; a web session key gets the current scopes.
 */
export const CURRENT_SCOPES = [
  'listings:read',
  'listings:write',
  'releases:write',
  'account:write',
  'sales:read',
] as const;

export type Scope = (typeof CURRENT_SCOPES)[number];
