/** Where the public keys are published (DESIGN.md item 21). */
export const KEYS_PATH = '/.well-known/repo402-keys.json';

/** A release's attestation: GET /api/v/{owner}/{slug}/releases/{version}/attestation. */
export function attestationUrl(baseUrl: string, owner: string, slug: string, version: string): string {
  return `${baseUrl}/api/v/${owner}/${slug}/releases/${version}/attestation`;
}
