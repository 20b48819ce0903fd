import path from 'node:path';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import type { JobSpec } from '../platform/jobs.js';
import { type ImportResult, importAdvisories } from '../scan/advisory-import.js';
import { type SyncResult, syncAdvisories } from '../scan/advisory-sync.js';
import { type RecheckResult, recheckReleases } from './advisory-flags.js';

/**
 * Any fixed key: one writer of the advisory tables at a time across processes (the job, the CLI
 * by hand): two imports replacing the same record at once would collide on its key.
 */
const SYNC_LOCK = 0x05f0_0001;

/** Flags passing releases that advisory data which arrived since their scan now blocks. */
export const advisoryRecheckJob: JobSpec<Record<string, never>, AppContext> = {
  name: 'releases.advisory-recheck',
  data: z.object({}),
  // One waiting run covers any number of imports that arrive before it starts.
  policy: 'stately',
  retryLimit: 3,
  expireInSeconds: 60 * 60,
  async run(ctx) {
    ctx.log.info({ ...(await recheckReleases(ctx)) }, 'releases checked against the new advisory data');
  },
};

/** Keeps the OSV data current from OSV_URL, hourly, when OSV_SYNC is on. */
export const advisorySyncJob: JobSpec<Record<string, never>, AppContext> = {
  name: 'releases.advisory-sync',
  data: z.object({}),
  cron: '23 * * * *',
  policy: 'stately',
  // A failed ecosystem is reported and tried again by the next run; the job itself does not fail.
  retryLimit: 0,
  // The first import of npm's export (hundreds of thousands of records) takes a while on PGlite.
  expireInSeconds: 2 * 60 * 60,
  async run(ctx) {
    if (ctx.config.advisories.sync) await syncAdvisoriesNow(ctx);
  },
};

/** What changed in the releases: rechecked here, `queued` for a worker, or `unchanged` data. */
type ReleasesRecheck = RecheckResult | 'queued' | 'unchanged';

/**
 * New advisory data re-checks the passing releases: as a job where the process has a queue,
 * otherwise (a one-off CLI command on its own database) here and now.
 */
async function recheckAfter(ctx: AppContext, imported: number): Promise<ReleasesRecheck> {
  if (imported === 0) return 'unchanged';
  if (!ctx.jobs) return recheckReleases(ctx);
  await ctx.jobs.send(advisoryRecheckJob, {});
  return 'queued';
}

/** One sync of every ecosystem's export (`repo402 advisories sync`, and the hourly job). */
export async function syncAdvisoriesNow(
  ctx: AppContext,
): Promise<SyncResult & { releases: ReleasesRecheck }> {
  const result = await ctx.database.withAdvisoryLock(SYNC_LOCK, () =>
    syncAdvisories(ctx.database.db, {
      baseUrl: ctx.config.advisories.osvUrl,
      tempDir: path.join(ctx.config.dataDir, 'tmp'),
      now: () => ctx.clock.now(),
      log: ctx.log,
    }),
  );
  return { ...result, releases: await recheckAfter(ctx, result.imported) };
}

/** `repo402 advisories import`: records from a file, a directory or an export zip, then the re-check. */
export async function importAdvisoriesNow(ctx: AppContext, source: string): Promise<ImportResult> {
  const result = await ctx.database.withAdvisoryLock(SYNC_LOCK, () =>
    importAdvisories(ctx.database.db, source, ctx.clock.now()),
  );
  await recheckAfter(ctx, result.imported);
  return result;
}
