import { z } from 'zod';
import { resignAttestations } from './attestations/service.js';
import type { AppContext } from './context.js';
import { migrate } from './db/migrate.js';
import { createInvites, MAX_INVITES_PER_CALL } from './identity/invites.js';
import { listReports, resolveReport } from './moderation/reports.js';
import {
  auditEntries,
  REASON_MAX_LENGTH,
  setCreatorSuspended,
  setListingSuspended,
  setReleaseYanked,
} from './moderation/service.js';
import {
  type ControlServer,
  controlSocketPath,
  type Operation,
  type Operations,
  startControlServer,
} from './platform/control.js';
import { logEvent } from './platform/events.js';
import { MicroUsdc, parseMicroUsdc } from './platform/money/money.js';
import { importAdvisoriesNow, syncAdvisoriesNow } from './releases/advisory-jobs.js';
import { attestUnattestedReleases } from './releases/cut/attest.js';

const Reason = z.string().trim().min(1).max(REASON_MAX_LENGTH);
const YankArgs = z.object({ listing: z.string().min(1), version: z.string().min(1), reason: Reason });
const ListingArgs = z.object({ listing: z.string().min(1), reason: Reason });
const CreatorArgs = z.object({ handle: z.string().min(1), reason: Reason });
const TRANSACTION = z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'a transaction hash (0x and 64 hex digits)');

function operation<A, R>(
  args: z.ZodType<A>,
  run: (ctx: AppContext, args: A) => Promise<R>,
): Operation<AppContext, A, R> {
  return { args, run };
}

/** The commands that change something: each one run is an `operator.command` event in the log. */
const commands = {
  migrate: operation(z.object({}), async (ctx) => {
    await migrate(ctx.database);
    return 'ok';
  }),
  'invites.create': operation(
    z.object({ count: z.number().int().min(1).max(MAX_INVITES_PER_CALL) }),
    (ctx, { count }) => createInvites(ctx.database.db, count),
  ),
  'advisories.import': operation(z.object({ source: z.string().min(1) }), (ctx, { source }) =>
    importAdvisoriesNow(ctx, source),
  ),
  'advisories.sync': operation(z.object({}), (ctx) => syncAdvisoriesNow(ctx)),
  'devnet.fund': operation(
    z.object({
      address: z.string().regex(/^0x[0-9a-fA-F]{40}$/),
      // The wire form (JSON over the control socket carries no bigint), parsed by the money module.
      amountMicro: MicroUsdc,
    }),
    async (ctx, { address, amountMicro }) => {
      const { fundOnDevnet } = await import('./devnet/fund.js');
      return fundOnDevnet(ctx, address as `0x${string}`, parseMicroUsdc(amountMicro));
    },
  ),
  // The server writes the archive itself: only it may read the embedded database while it runs.
  'backup.create': operation(z.object({ file: z.string().min(1) }), async (ctx, { file }) => {
    const { createBackup } = await import('./backup/backup.js');
    return createBackup(ctx, file);
  }),
  'chain.reconcile': operation(
    z.object({ since: z.iso.datetime({ offset: true }) }),
    async (ctx, { since }) => {
      const { recoverFromChain } = await import('./earnings/chain-recovery.js');
      return recoverFromChain(ctx, new Date(since));
    },
  ),
  'payouts.resolve': operation(
    z.union([
      z.object({ transaction: TRANSACTION, creator: z.string().min(1) }),
      z.object({ transaction: TRANSACTION, notAPayout: z.string().min(1).max(500) }),
    ]),
    async (ctx, { transaction, ...resolution }) => {
      const { resolveTransferOut, transferOutView } = await import('./earnings/transfers-out.js');
      return transferOutView(await resolveTransferOut(ctx, transaction, resolution));
    },
  ),
  'sales.grant': operation(
    z.object({
      transaction: TRANSACTION,
      owner: z.string().min(1),
      slug: z.string().min(1),
      version: z.string().min(1).optional(),
    }),
    async (ctx, { transaction, ...target }) => {
      const { grantUnattributedSale } = await import('./purchases/chain-sales.js');
      return grantUnattributedSale(ctx, transaction, target);
    },
  ),
  'sales.refund': operation(
    z.object({ transaction: TRANSACTION, note: z.string().min(1).max(500) }),
    async (ctx, { transaction, note }) => {
      const { refundUnattributedSale, unattributedSaleView } = await import('./purchases/chain-sales.js');
      return unattributedSaleView(await refundUnattributedSale(ctx, transaction, note));
    },
  ),
  'attestations.resign': operation(z.object({}), (ctx) => resignAttestations(ctx)),
  'attestations.backfill': operation(z.object({}), (ctx) => attestUnattestedReleases(ctx)),
  'releases.yank': operation(YankArgs, (ctx, args) => setReleaseYanked(ctx, args)),
  'releases.unyank': operation(YankArgs, (ctx, args) => setReleaseYanked(ctx, { ...args, undo: true })),
  'listings.suspend': operation(ListingArgs, (ctx, args) => setListingSuspended(ctx, args)),
  'listings.unsuspend': operation(ListingArgs, (ctx, args) =>
    setListingSuspended(ctx, { ...args, undo: true }),
  ),
  'creators.suspend': operation(CreatorArgs, (ctx, args) => setCreatorSuspended(ctx, args)),
  'creators.unsuspend': operation(CreatorArgs, (ctx, args) =>
    setCreatorSuspended(ctx, { ...args, undo: true }),
  ),
  'reports.resolve': operation(z.object({ id: z.uuid(), note: Reason }), (ctx, args) =>
    resolveReport(ctx, args),
  ),
  'pause.set': operation(z.object({ paused: z.boolean() }), async (ctx, { paused }) => {
    await ctx.pause.set(paused);
    return { paused: ctx.pause.paused };
  }),
} satisfies Operations<AppContext>;

/** A command's arguments as its event shows them (`paused`, `count`, `source`), without an address. */
function shownArgs(args: unknown): Record<string, unknown> {
  const { address: _address, ...shown } = (args ?? {}) as Record<string, unknown>;
  return shown;
}

function logged<O extends Operations<AppContext>>(ops: O): O {
  return Object.fromEntries(
    Object.entries(ops).map(([command, op]) => [
      command,
      operation(op.args, async (ctx, args) => {
        try {
          // Each entry's own schema parsed `args` before this runs.
          const result = await op.run(ctx, args as never);
          logEvent(ctx.log, 'operator.command', { command, ...shownArgs(args), outcome: 'done' });
          return result;
        } catch (error) {
          logEvent(ctx.log, 'operator.command', { command, ...shownArgs(args), outcome: 'failed' });
          throw error;
        }
      }),
    ]),
  ) as O;
}

/** Every operator command, runnable through the control socket or in-process by the CLI. */
export const operations = {
  ping: operation(z.object({}), async () => 'pong'),
  /** `repo402 ready`: this process's readiness, for a supervisor on the same machine. */
  ready: operation(z.object({}), (ctx) => ctx.readiness()),
  /** `repo402 audit`: the operator's moderation actions, oldest first. */
  'audit.list': operation(
    z.object({
      after: z.number().int().min(0).default(0),
      limit: z.number().int().min(1).max(1000).default(1000),
    }),
    (ctx, { after, limit }) => auditEntries(ctx, after, limit),
  ),
  'reports.list': operation(z.object({ all: z.boolean().default(false) }), (ctx, { all }) =>
    listReports(ctx, { all }),
  ),
  /** `repo402 payouts unresolved`: the transfers out that hold the payout sweep. */
  'payouts.unresolved': operation(z.object({}), async (ctx) => {
    const { unresolvedTransfersOut, transferOutView } = await import('./earnings/transfers-out.js');
    return (await unresolvedTransfersOut(ctx)).map(transferOutView);
  }),
  /** `repo402 sales unattributed`: the sales on chain no listing could be tied to. */
  'sales.unattributed': operation(z.object({}), async (ctx) => {
    const { openUnattributedSales, unattributedSaleView } = await import('./purchases/chain-sales.js');
    return (await openUnattributedSales(ctx.database.db)).map(unattributedSaleView);
  }),
  ...logged(commands),
} satisfies Operations<AppContext>;

export type OperationName = keyof typeof operations;

/** The CLI's way into a running process; one that cannot open it still runs, and says so. */
export async function startOperatorSocket(ctx: AppContext): Promise<ControlServer | undefined> {
  try {
    return await startControlServer({ socketPath: controlSocketPath(ctx.config.dataDir) }, ctx, operations);
  } catch (error) {
    ctx.log.warn({ err: error }, 'control socket unavailable; CLI commands will not reach this process');
    return undefined;
  }
}
