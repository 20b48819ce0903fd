import { readFileSync } from 'node:fs';

/**
 * The version of repo402 this process runs: package.json's, which a release tags `vX.Y.Z` and
 * CHANGELOG.md describes. Read from the package root, one level above src/ and dist/ alike.
 */
export const VERSION: string = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
