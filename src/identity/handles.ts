/**
 * Handles and slugs share the URL space with the service's own pages (`/{owner}/{slug}`,
 * DESIGN.md item 18): 3–39 characters of a-z, 0-9 and single hyphens, not starting or ending with
 * a hyphen. Listings use the same rule for slugs.
 */
export const NAME_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
export const NAME_MIN_LENGTH = 3;
export const NAME_MAX_LENGTH = 39;
export const NAME_RULE =
  'lower-case letters, digits and single hyphens, not starting or ending with a hyphen';

export function isValidName(value: string): boolean {
  return value.length >= NAME_MIN_LENGTH && value.length <= NAME_MAX_LENGTH && NAME_PATTERN.test(value);
}

/**
 * First path segments the service serves or may serve, and names that would let a creator pass
 * for the service. A test checks every first segment of the app's routes is on this list.
 */
export const RESERVED_HANDLES: ReadonlySet<string> = new Set([
  'api',
  'app',
  'library',
  'docs',
  'static',
  'assets',
  'admin',
  'login',
  'logout',
  'settings',
  'health',
  'terms',
  'well-known',
  'mcp',
  'download',
  'favicon.ico',
  // Pages a web app commonly grows, and names that impersonate the operator.
  'account',
  'auth',
  'signin',
  'sign-in',
  'signup',
  'sign-up',
  'register',
  'dashboard',
  'new',
  'search',
  'explore',
  'pricing',
  'about',
  'help',
  'support',
  'security',
  'status',
  'blog',
  'www',
  'root',
  'system',
  'official',
  'repo402',
]);

export function isReservedHandle(handle: string): boolean {
  return RESERVED_HANDLES.has(handle);
}
