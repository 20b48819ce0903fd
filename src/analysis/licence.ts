import { createRequire } from 'node:module';

export interface LicenceResult {
  /** SPDX identifier; `NOASSERTION` when a licence file is not recognised, `NONE` when there is none. */
  spdx: string;
  /** `matched` (text matches an SPDX licence text), `declared` (named in a package manifest only), `unrecognised`, `missing`. */
  verdict: 'matched' | 'declared' | 'unrecognised' | 'missing';
}

/** Dice similarity of word sets needed to call a text a match (licensee uses 0.98 on its own templates; SPDX texts carry optional parts). */
const MATCH_THRESHOLD = 0.9;

let corpus: Array<{ id: string; words: Set<string> }> | undefined;

function words(text: string): Set<string> {
  const body = text
    .toLowerCase()
    .split('\n')
    .filter((line) => !/^\s*(copyright|\(c\)|©)/.test(line))
    .join(' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/https?:\/\/\S+/g, ' ')
    .replace(/licence/g, 'license')
    .replace(/[^a-z0-9]+/g, ' ');
  return new Set(body.split(' ').filter(Boolean));
}

function loadCorpus() {
  const require = createRequire(import.meta.url);
  const full = require('spdx-license-list/full') as Record<string, { licenseText: string }>;
  return Object.entries(full).map(([id, entry]) => ({ id, words: words(entry.licenseText) }));
}

/** The best SPDX match for a licence text, or undefined below the threshold. */
export function matchLicenceText(text: string): { spdx: string; similarity: number } | undefined {
  corpus ??= loadCorpus();
  const own = words(text);
  if (own.size < 10) return undefined;
  let best: { spdx: string; similarity: number } | undefined;
  for (const candidate of corpus) {
    const bound = (2 * Math.min(own.size, candidate.words.size)) / (own.size + candidate.words.size);
    if (bound < MATCH_THRESHOLD || (best && bound < best.similarity)) continue;
    let shared = 0;
    for (const word of own) if (candidate.words.has(word)) shared++;
    const similarity = (2 * shared) / (own.size + candidate.words.size);
    if (similarity < MATCH_THRESHOLD || (best && similarity < best.similarity)) continue;
    if (!best || similarity > best.similarity || idPenalty(candidate.id) < idPenalty(best.spdx))
      best = { spdx: candidate.id, similarity };
  }
  return best;
}

/**
 * GNU texts are identical across `-only`, `-or-later` and the deprecated bare and `+` ids; the text
 * alone grants no "or later", so `-only` is reported.
 */
function idPenalty(id: string): number {
  if (id.endsWith('+') || /^(A|L)?GPL-[0-9.]+$|^GFDL-[0-9.]+$|^LGPL-2\.0$/.test(id)) return 2;
  return id.endsWith('-or-later') ? 1 : 0;
}

const LICENCE_FILE = /^(license|licence|copying|unlicense)([.-][a-z0-9]+)?(\.(md|txt|rst))?$/i;

/**
 * The repository's licence from its root licence file's text (not its name); failing that, the
 * SPDX id a package manifest declares. A missing or unrecognised licence never blocks a release.
 */
export function analyseLicence(files: Map<string, string>): LicenceResult {
  const candidates = [...files.keys()].filter((p) => !p.includes('/') && LICENCE_FILE.test(p)).sort();
  candidates.push(...[...files.keys()].filter((p) => /^LICENSES\/[^/]+$/.test(p)).sort());
  for (const file of candidates) {
    const match = matchLicenceText(files.get(file)!);
    if (match) return { spdx: match.spdx, verdict: 'matched' };
  }
  const declared = declaredLicence(files);
  if (declared) return { spdx: declared, verdict: 'declared' };
  return candidates.length > 0
    ? { spdx: 'NOASSERTION', verdict: 'unrecognised' }
    : { spdx: 'NONE', verdict: 'missing' };
}

function declaredLicence(files: Map<string, string>): string | undefined {
  const root = (name: string) => files.get(name);
  try {
    const pkg = root('package.json') && (JSON.parse(root('package.json')!) as { license?: unknown });
    if (
      pkg &&
      typeof pkg.license === 'string' &&
      /^[A-Za-z0-9.+-]+( (OR|AND) [A-Za-z0-9.+-]+)*$/.test(pkg.license)
    )
      return pkg.license;
  } catch {
    // An unreadable package.json declares nothing.
  }
  const cargo = root('Cargo.toml')?.match(/^license\s*=\s*"([^"]+)"/m);
  if (cargo) return cargo[1];
  const pyproject = root('pyproject.toml')?.match(/^license\s*=\s*(?:"([^"]+)"|\{\s*text\s*=\s*"([^"]+)")/m);
  if (pyproject) return pyproject[1] ?? pyproject[2];
  return undefined;
}
