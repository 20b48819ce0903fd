import { z } from 'zod';
import type { AppContext } from '../context.js';
import type { JobSpec } from '../platform/jobs.js';
import { reconcilePayments } from '../purchases/reconcile.js';
import { reconcileSweeps, sweepPayouts } from './payouts.js';

/** Resolves payments left `settling` and payouts left `sending`, every minute. */
export const settlementReconcileJob: JobSpec<Record<string, never>, AppContext> = {
  name: 'payments-reconcile',
  data: z.object({}),
  cron: '* * * * *',
  policy: 'singleton',
  retryLimit: 0,
  // A pass takes seconds. A worker killed mid-pass leaves its job active, and the singleton policy
  // holds the next passes back until it expires: two minutes, not the default fifteen. A pass that
  // does outlive it overlaps the next harmlessly (each row is driven under its lease).
  expireInSeconds: 120,
  async run(ctx) {
    await reconcilePayments(ctx);
    await reconcileSweeps(ctx);
  },
};

/** Pays creator balances out, hourly. */
export const payoutSweepJob: JobSpec<Record<string, never>, AppContext> = {
  name: 'payments-payout-sweep',
  data: z.object({}),
  cron: '0 * * * *',
  policy: 'singleton',
  retryLimit: 0,
  async run(ctx) {
    await sweepPayouts(ctx);
  },
};
