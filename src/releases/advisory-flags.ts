import type { Dependency } from '../analysis/dependencies.js';
import type { AppContext } from '../context.js';
import type { Db } from '../db/connect.js';
import { parseVersion } from '../platform/versions.js';
import { checkDependencies } from '../scan/dependency-checks.js';
import { escapeDisplay } from '../scan/paths.js';
import type { Finding } from '../scan/types.js';
import { announceWebhookEvents, enqueueWebhookEvent } from '../webhooks/events.js';
import {
  flaggedReleasesOf,
  newestUnflaggedAbove,
  passingReleasesWithDependencies,
  setAdvisoryFlag,
} from './store.js';
import { type AdvisoryFlagBody, advisoryFlagBody } from './views.js';

const BATCH = 200;

/** What `advisory_flag` stores; its time is a column of its own. */
interface StoredFlag {
  advisory_ids: string[];
  findings: Finding[];
}

export interface RecheckResult {
  /** Passing releases with dependencies, each checked again. */
  checked: number;
  /** Of those, how many carry a flag now. */
  flagged: number;
  /** Flags set, changed or lifted by this run. */
  changed: number;
}

/**
 * Runs `known_vulns` and `known_malware` again, with the inspection's own check, over the
 * dependencies every passing release's analysis stored, against the advisory data as it is now.
 * A release whose dependencies now match a blocking record (HIGH or CRITICAL, or malicious) is
 * flagged with the advisories' ids; one whose list changes is updated, one that no longer matches
 * (a record withdrawn or downgraded) loses its flag. The verdict is never touched: a scan is
 * terminal. Pages by release id, writes only what changed: running it twice changes nothing.
 */
export async function recheckReleases(
  ctx: Pick<AppContext, 'database' | 'clock' | 'listingEvents' | 'config' | 'jobs' | 'log'>,
): Promise<RecheckResult> {
  const db = ctx.database.db;
  const result: RecheckResult = { checked: 0, flagged: 0, changed: 0 };
  const newlyFlagged: NewlyFlagged[] = [];
  let after: string | null = null;
  for (;;) {
    const page = await passingReleasesWithDependencies(db, after, BATCH);
    for (const release of page) {
      result.checked++;
      const flag = await flagFor(db, release.dependencies);
      if (flag) result.flagged++;
      const before = (release.advisoryFlag as StoredFlag | null)?.advisory_ids ?? [];
      if (before.join('\n') === (flag?.advisory_ids ?? []).join('\n')) continue;
      await setAdvisoryFlag(db, release.id, {
        advisoryFlag: flag,
        advisoryFlaggedAt: flag ? ctx.clock.now() : null,
      });
      result.changed++;
      ctx.listingEvents.announce(release.owner, release.slug);
      const added = (flag?.advisory_ids ?? []).filter((id) => !before.includes(id));
      if (flag && added.length > 0) newlyFlagged.push({ ...release, flag });
    }
    if (page.length < BATCH) break;
    after = page.at(-1)!.id;
  }
  await announceAdvisories(ctx, newlyFlagged);
  return result;
}

interface NewlyFlagged {
  id: string;
  listingId: string;
  version: string;
  owner: string;
  slug: string;
  flag: StoredFlag;
}

/**
 * `release.advisory` to the holders of each newly flagged version, once every flag of this run is
 * written, so the fixed version it names (the newest passing release above it without a flag) is
 * one this run did not flag too. Keyed by release and advisories: a later run repeats nothing.
 */
async function announceAdvisories(
  ctx: Pick<AppContext, 'database' | 'clock' | 'config' | 'jobs' | 'log'>,
  flagged: NewlyFlagged[],
): Promise<void> {
  if (flagged.length === 0) return;
  const db = ctx.database.db;
  const baseUrl = ctx.config.baseUrl;
  for (const release of flagged) {
    const fixed = await newestUnflaggedAbove(db, release.listingId, parseVersion(release.version)!);
    await enqueueWebhookEvent(
      db,
      {
        type: 'release.advisory',
        listingId: release.listingId,
        version: release.version,
        data: {
          listing: { id: release.listingId, owner: release.owner, slug: release.slug },
          version: release.version,
          advisory_ids: release.flag.advisory_ids,
          findings: release.flag.findings,
          fixed_version: fixed ?? null,
          release_log_url: `${baseUrl}/api/v/${release.owner}/${release.slug}/releases`,
          resource_url: `${baseUrl}/api/r/${release.owner}/${release.slug}`,
        },
        dedupeKey: `release.advisory:${release.id}:${release.flag.advisory_ids.join(',')}`,
      },
      ctx.clock.now(),
    );
  }
  await announceWebhookEvents(ctx);
}

async function flagFor(db: Db, dependencies: unknown): Promise<StoredFlag | null> {
  if (!Array.isArray(dependencies)) return null;
  const { findings } = await checkDependencies(db, dependencies as Dependency[]);
  const blocking = findings
    .filter((finding) => finding.tier === 'blocking')
    .map((finding) =>
      finding.path === undefined ? finding : { ...finding, path: escapeDisplay(finding.path) },
    );
  if (blocking.length === 0) return null;
  return {
    advisory_ids: [...new Set(blocking.map((finding) => finding.rule_id))].sort(),
    findings: blocking,
  };
}

/** The versions among `versions` that carry a flag, oldest first (a holder's view of what they own). */
export async function flaggedVersions(
  db: Db,
  listingId: string,
  versions: string[],
): Promise<Array<AdvisoryFlagBody & { version: string }>> {
  const rows = await flaggedReleasesOf(db, listingId, versions);
  return rows.flatMap((row) => {
    const flag = advisoryFlagBody(row);
    return flag ? [{ version: row.version, ...flag }] : [];
  });
}
