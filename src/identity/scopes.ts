/**
 * API key scopes (DESIGN.md item 4). An agent key carries every scope current when it was issued,
 * so a key issued before a scope existed lacks it until the creator rotates the key.
 */
export const CURRENT_SCOPES = ['listings:read', 'listings:write', 'releases:write', 'account:write'] as const;

export type Scope = (typeof CURRENT_SCOPES)[number];
