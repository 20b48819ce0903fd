/** Release versions are `X.Y.Z` (no leading zeros, no pre-release part); tags are `vX.Y.Z`. */

export interface Version {
  major: number;
  minor: number;
  patch: number;
}

const PART = '(0|[1-9][0-9]{0,8})';
export const VERSION_PATTERN = new RegExp(`^${PART}\\.${PART}\\.${PART}$`);
/**
 * The one definition of a release tag. Also a POSIX ERE: the hosted repositories' pre-receive hook
 * checks pushed `v*` tags with its source, so the hook and the cut never disagree.
 */
export const TAG_PATTERN = new RegExp(`^v${PART}\\.${PART}\\.${PART}$`);
/** What a release tag looks like, in the words every refusal of one uses. */
export const RELEASE_TAG_FORM =
  'vMAJOR.MINOR.PATCH, e.g. v1.2.0 (whole numbers without leading zeros, at most nine digits each)';

export function parseVersion(value: string): Version | undefined {
  const match = VERSION_PATTERN.exec(value);
  if (!match) return undefined;
  return { major: Number(match[1]), minor: Number(match[2]), patch: Number(match[3]) };
}

/** The version a tag name stands for, when it is a release tag. */
export function versionOfTag(tag: string): string | undefined {
  return TAG_PATTERN.test(tag) ? tag.slice(1) : undefined;
}

export function tagOf(version: string): string {
  return `v${version}`;
}

export function compareVersions(a: string, b: string): number {
  const x = parseVersion(a);
  const y = parseVersion(b);
  if (!x || !y) throw new RangeError(`not a version: ${!x ? a : b}`);
  return x.major - y.major || x.minor - y.minor || x.patch - y.patch;
}
