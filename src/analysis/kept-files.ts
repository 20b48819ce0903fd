import path from 'node:path';

/** Dependency manifests and lockfiles the analysis parses (by base name). */
export const MANIFEST_NAMES = new Set([
  'package.json',
  'package-lock.json',
  'npm-shrinkwrap.json',
  'pnpm-lock.yaml',
  'yarn.lock',
  'pyproject.toml',
  'poetry.lock',
  'setup.py',
  'Cargo.toml',
  'Cargo.lock',
  'go.mod',
  'go.sum',
  'build.rs',
]);

const MAX_KEPT_BYTES = 16 * 1024 * 1024;

/**
 * Files whose whole text the analysis needs after the streaming pass: manifests, README, licence,
 * changelog, skill and agent definitions, hook and MCP configuration. Everything else is seen once
 * by the pass and dropped.
 */
export function isKeptFile(filePath: string, size: number): boolean {
  if (size > MAX_KEPT_BYTES) return false;
  if (/(^|\/)node_modules\//.test(filePath)) return false;
  const base = path.posix.basename(filePath);
  if (MANIFEST_NAMES.has(base)) return true;
  if (/^requirements[^/]*\.txt$/i.test(base)) return true;
  if (/^(readme|license|licence|copying|changelog|changes|history)(\.[a-z]+)?$/i.test(base)) return true;
  if (/^LICENSES\//.test(filePath)) return true;
  if (base === 'SKILL.md' || base === '.mcp.json' || base === 'mcp.json' || base === 'hooks.json')
    return true;
  if (/(^|\/)\.claude-plugin\/[^/]+\.json$/.test(filePath)) return true;
  if (/(^|\/)\.claude\/settings(\.local)?\.json$/.test(filePath)) return true;
  if (/(^|\/)(agents|commands)\/.+\.md$/i.test(filePath)) return true;
  return false;
}
