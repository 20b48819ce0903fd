import type { TreeEntry } from '../../analysis/git.js';

/** Characters an extractor could read as structure: a backslash (a folder separator on Windows) and controls. */
const UNSAFE_IN_NAME = /[\\\p{Cc}]/gu;

/**
 * The files of a tree as the zip names them, in byte order of their paths, each under `prefix`:
 * a backslash or control character percent-encoded (`%5C`), a `.` or `..` component as `%2E`.
 * Should an encoded name collide with another, the later file is left out (a zip never holds two
 * entries of one name). One function for the zip being written and for reading an earlier one,
 * so both name a tree's files alike.
 */
export function zipEntries(files: TreeEntry[], prefix: string): Array<{ file: TreeEntry; name: string }> {
  const sorted = files
    .map((file) => ({ file, key: Buffer.from(file.path) }))
    .sort((a, b) => Buffer.compare(a.key, b.key));
  const names = new Set<string>();
  const named: Array<{ file: TreeEntry; name: string }> = [];
  for (const { file } of sorted) {
    const name = prefix + entryName(file.path);
    if (names.has(name)) continue;
    names.add(name);
    named.push({ file, name });
  }
  return named;
}

function entryName(path: string): string {
  return path
    .replace(UNSAFE_IN_NAME, (ch) => encodeURIComponent(ch))
    .split('/')
    .map((part) => (part === '.' || part === '..' ? part.replaceAll('.', '%2E') : part))
    .join('/');
}
