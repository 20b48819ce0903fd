import { VERSION_PATTERN } from '../platform/versions.js';

/**
 * What a buyer says they bought, `owner/slug@version`: `repo402 verify --expect` checks the
 * statement's listing and version against it, so a genuine attestation of another listing or
 * another version does not pass for the one bought. Kept free of heavy imports: the CLI parses its
 * argument with it before loading the verifier.
 */
export interface ExpectedRelease {
  owner: string;
  slug: string;
  version: string;
}

export const EXPECTED_RELEASE_FORM = '<owner>/<slug>@<version>, e.g. acme/tools@1.2.0';

/** `owner/slug@X.Y.Z` as its parts; throws, naming the form, on anything else. */
export function parseExpectedRelease(text: string): ExpectedRelease {
  const match = /^([^/@\s]+)\/([^/@\s]+)@([^/@\s]+)$/.exec(text);
  if (!match || !VERSION_PATTERN.test(match[3]!)) {
    throw new Error(`expected ${EXPECTED_RELEASE_FORM} (the version without a leading v)`);
  }
  return { owner: match[1]!, slug: match[2]!, version: match[3]! };
}

export function formatRelease(release: { owner: string; slug: string; version: string }): string {
  return `${release.owner}/${release.slug}@${release.version}`;
}
