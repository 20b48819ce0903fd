/**
 * Where each symlink of a tree leads once the tree is extracted: resolved the way an operating
 * system would, component by component, following the tree's other links. Lexical normalisation
 * is not enough: with `x -> .` at the root, `y -> x/..` looks inside but leaves the tree.
 *
 * Read conservatively, so a link judged inside stays inside on any extractor: a backslash splits
 * components (Windows), a drive letter or a leading separator is absolute, a link's own directory
 * is resolved too, and a link must stay inside both on a case-sensitive file system and on a
 * case-insensitive one (where `D -> .` puts `d/l` at the root).
 */

/** Linux's MAXSYMLINKS: past this many links in one resolution, the OS gives up (ELOOP). */
export const MAX_LINK_HOPS = 40;
/** PATH_MAX less the NUL: longer targets cannot be created as links. */
const MAX_TARGET_BYTES = 4095;

export type LinkVerdict =
  | { inside: true /** The tree path the link leads to ('' is the root). */; resolved: string }
  | { inside: false; reason: 'absolute' | 'escapes' | 'too-many-hops' | 'invalid' };

const ABSOLUTE = /^(?:[/\\]|[A-Za-z]:)/;
const components = (text: string) => text.split(/[/\\]/);

/** Resolves every link of a tree (`links`: link path → target text). */
export function resolveSymlinks(links: ReadonlyMap<string, string>): Map<string, LinkVerdict> {
  const folded = new Map<string, string>();
  for (const linkPath of [...links.keys()].sort()) {
    const key = linkPath.toLowerCase();
    if (!folded.has(key)) folded.set(key, linkPath);
  }
  const exactly = (candidate: string) => (links.has(candidate) ? candidate : undefined);
  const ignoringCase = (candidate: string) => exactly(candidate) ?? folded.get(candidate.toLowerCase());

  const verdicts = new Map<string, LinkVerdict>();
  for (const [linkPath, target] of links) {
    const verdict = resolveOne(linkPath, target, links, exactly);
    const folding = verdict.inside ? resolveOne(linkPath, target, links, ignoringCase) : verdict;
    verdicts.set(linkPath, folding.inside ? verdict : folding);
  }
  return verdicts;
}

function resolveOne(
  linkPath: string,
  target: string,
  links: ReadonlyMap<string, string>,
  linkAt: (candidate: string) => string | undefined,
): LinkVerdict {
  if (!isValidTarget(target)) return { inside: false, reason: 'invalid' };
  if (ABSOLUTE.test(target)) return { inside: false, reason: 'absolute' };
  const stack: string[] = [];
  // The link's own directory first (its components may be other links), then its target.
  const queue = [...components(linkPath).slice(0, -1), ...components(target)];
  let hops = 1;
  while (queue.length > 0) {
    const part = queue.shift()!;
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (stack.length === 0) return { inside: false, reason: 'escapes' };
      stack.pop();
      continue;
    }
    const through = linkAt([...stack, part].join('/'));
    if (through === undefined) {
      stack.push(part);
      continue;
    }
    if (++hops > MAX_LINK_HOPS) return { inside: false, reason: 'too-many-hops' };
    const next = links.get(through)!;
    if (!isValidTarget(next)) return { inside: false, reason: 'invalid' };
    if (ABSOLUTE.test(next)) return { inside: false, reason: 'absolute' };
    queue.unshift(...components(next));
  }
  return { inside: true, resolved: stack.join('/') };
}

function isValidTarget(target: string): boolean {
  return target.length > 0 && !target.includes('\0') && Buffer.byteLength(target) <= MAX_TARGET_BYTES;
}
