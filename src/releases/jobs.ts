import { z } from 'zod';
import type { AppContext } from '../context.js';
import type { JobSpec } from '../platform/jobs.js';
import { runCut } from './cut/run.js';
import { staleQueuedCuts } from './store.js';

const CUT_RETRY_LIMIT = 4;

/** Snapshot, record and inspect one claimed version. */
export const cutJob: JobSpec<{ cutId: string }, AppContext> = {
  name: 'releases.cut',
  data: z.object({ cutId: z.uuid() }),
  retryLimit: CUT_RETRY_LIMIT,
  retryDelaySeconds: 10,
  retryBackoff: true,
  expireInSeconds: 30 * 60,
  // At most one run per cut at a time; a resend while one is queued is absorbed.
  policy: 'stately',
  needsRepositories: true,
  async run(ctx, data, job) {
    if (ctx.pause.paused) {
      // Held, not failed: the same cut is asked for again until the operator resumes.
      ctx.log.info({ cutId: data.cutId }, 'release cut held: the service is paused');
      await ctx.jobs?.send(cutJob, data, {
        singletonKey: data.cutId,
        startAfterSeconds: PAUSED_RECHECK_SECONDS,
      });
      return;
    }
    await runCut(ctx, data.cutId, { finalAttempt: job.retryCount >= CUT_RETRY_LIMIT });
  },
};

/** How often a cut held by a pause looks again. */
const PAUSED_RECHECK_SECONDS = 15;

/** Claims still queued after this long lost their job (a crash between claim and send). */
const STALE_AFTER_MS = 5 * 60 * 1000;

/** Re-sends cut jobs a crash may have dropped; the claim row is the record, the job only a nudge. */
export const resendCutsJob: JobSpec<Record<string, never>, AppContext> = {
  name: 'releases.resend-cuts',
  data: z.object({}),
  cron: '* * * * *',
  policy: 'singleton',
  retryLimit: 0,
  async run(ctx) {
    const stale = await staleQueuedCuts(
      ctx.database.db,
      new Date(ctx.clock.now().getTime() - STALE_AFTER_MS),
      100,
    );
    for (const cut of stale) await ctx.jobs?.send(cutJob, { cutId: cut.id }, { singletonKey: cut.id });
  },
};
