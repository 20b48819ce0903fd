import type { z } from 'zod';
import type { Db } from '../db/connect.js';
import { parseVersion } from '../platform/versions.js';
import type { Capabilities } from '../scan/types.js';
import type { UpdateChangesSchema } from './schemas.js';
import { type ReleaseRow, releasesFromTo } from './store.js';
import { type PricesInForce, type ReleaseBody, releaseBody } from './views.js';

export type UpdateChanges = z.infer<typeof UpdateChangesSchema>;

/**
 * What a holder of `from` is offered in an update to `to` (the update 402, version status with a
 * wallet signature, MCP `check_version`): every release after `from` up to `to`, failing ones
 * included, and the cumulative change from `from` to `to` composed from what each release stores
 * (docs/DECISIONS.md, "Cumulative update summary"): diff counts are summed (upper bounds: a file
 * touched by two releases counts twice), components are the union, and capabilities gained are
 * everything any release since `from` reports that `from` did not, failing releases included.
 */
export async function updateOffer(
  db: Db,
  listing: { id: string } & PricesInForce,
  fromVersion: string,
  toVersion: string,
): Promise<{ releases: ReleaseBody[]; changes: UpdateChanges }> {
  const from = parseVersion(fromVersion);
  const to = parseVersion(toVersion);
  if (!from || !to) throw new RangeError(`not a version range: ${fromVersion}..${toVersion}`);
  const range = await releasesFromTo(db, listing.id, from, to);
  const held = range[0]?.version === fromVersion ? range[0] : undefined;
  const rows = held ? range.slice(1) : range;
  return {
    releases: rows.map((row) => releaseBody(row, listing)),
    changes: composeChanges(fromVersion, toVersion, held, rows),
  };
}

interface StoredDiff {
  files_added: number;
  files_changed: number;
  files_removed: number;
  additions: number;
  deletions: number;
  components_touched: string[];
}

function capabilitiesOf(row: ReleaseRow | undefined): Capabilities | undefined {
  return (row?.scan as { capabilities?: Capabilities } | null)?.capabilities ?? undefined;
}

function sorted(values: Iterable<string>): string[] {
  return [...new Set(values)].sort();
}

/** The cumulative change of `rows` (oldest first, each diffed against its predecessor) over `held`. */
export function composeChanges(
  fromVersion: string,
  toVersion: string,
  held: ReleaseRow | undefined,
  rows: ReleaseRow[],
): UpdateChanges {
  const diff = { files_added: 0, files_changed: 0, files_removed: 0, additions: 0, deletions: 0 };
  const components = new Set<string>();
  let complete = true;
  for (const row of rows) {
    const stored = row.diffSummary as StoredDiff | null;
    if (!stored) {
      complete = false;
      continue;
    }
    diff.files_added += stored.files_added;
    diff.files_changed += stored.files_changed;
    diff.files_removed += stored.files_removed;
    diff.additions += stored.additions;
    diff.deletions += stored.deletions;
    for (const component of stored.components_touched) components.add(component);
  }

  const before = capabilitiesOf(held);
  const had = {
    hosts: new Set(before?.hosts.filter((use) => !use.local).map((use) => use.host)),
    tools: new Set(before?.tools),
    runs: new Set(before?.runs),
    env: new Set(before?.env.map((use) => use.name)),
  };
  const gained = { hosts: [] as string[], tools: [] as string[], runs: [] as string[], env: [] as string[] };
  let installRuns = false;
  for (const row of rows) {
    const caps = capabilitiesOf(row);
    if (!caps) {
      complete = false;
      continue;
    }
    for (const use of caps.hosts) if (!use.local && !had.hosts.has(use.host)) gained.hosts.push(use.host);
    for (const tool of caps.tools) if (!had.tools.has(tool)) gained.tools.push(tool);
    for (const run of caps.runs) if (!had.runs.has(run)) gained.runs.push(run);
    for (const use of caps.env) if (!had.env.has(use.name)) gained.env.push(use.name);
    if (caps.install_runs && !before?.install_runs) installRuns = true;
  }
  if (!before) complete = false;

  return {
    from: fromVersion,
    to: toVersion,
    method: 'composed',
    complete,
    releases: rows.length,
    failing_versions: rows.filter((row) => row.verdict !== 'pass').map((row) => row.version),
    diff_summary: { ...diff, components_touched: sorted(components) },
    capabilities_gained: {
      hosts: sorted(gained.hosts),
      tools: sorted(gained.tools),
      runs: sorted(gained.runs),
      env: sorted(gained.env),
      install_runs: installRuns,
    },
  };
}
