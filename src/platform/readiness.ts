import { z } from 'zod';

/**
 * Readiness: whether this process can do its work now, for load balancers (`GET /api/ready`) and
 * supervisors (`repo402 ready`). Unlike `/api/health`, whose meaning SPEC.md fixes (our database
 * only), it asks every dependency this process uses: the database, the blob store, the git host
 * (or the repositories on this disk), Redis when configured, the facilitator and the chain reader
 * in processes that take payments, and the operator's pause. Each check has its own time limit, and
 * all run at once, so an answer takes at most that long.
 */

const CHECK_TIMEOUT_MS = 2_000;

export const CheckStateSchema = z.enum(['ok', 'down']);
export const ReadinessSchema = z
  .object({
    ready: z.boolean(),
    checks: z.record(z.string(), CheckStateSchema).meta({
      description:
        'Each dependency this process uses: database, blob_store, repositories or git_host, redis (when configured), facilitator and chain (processes that take payments)',
    }),
    paused: z.boolean(),
  })
  .meta({ id: 'Readiness' });
export type Readiness = z.infer<typeof ReadinessSchema>;

/** What this process does: processes that take payments also need the facilitator and the chain. */
export interface ProcessNeeds {
  payments: boolean;
}

/** What readiness asks of the process's context (the shared context has all of it). */
export interface ReadinessDeps {
  config: { gitHostUrl?: string };
  database: { ping(timeoutMs?: number): Promise<boolean> };
  blobs: { ping(): Promise<void> };
  repositories: { run(name: 'repos.ready', args: Record<string, never>): Promise<unknown> };
  redis?: { ping(): Promise<unknown> };
  pause: { readonly paused: boolean };
  rail(): Promise<{
    facilitator: { getSupported(): Promise<unknown> };
    reader: { getBlockNumber(): Promise<bigint> };
  }>;
}

function within<T>(work: () => Promise<T>): Promise<'ok' | 'down'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'down'>((resolve) => {
    timer = setTimeout(() => resolve('down'), CHECK_TIMEOUT_MS);
  });
  return Promise.race([
    Promise.resolve()
      .then(work)
      .then(
        () => 'ok' as const,
        () => 'down' as const,
      ),
    timeout,
  ]).finally(() => clearTimeout(timer));
}

export async function readiness(ctx: ReadinessDeps, needs: ProcessNeeds): Promise<Readiness> {
  const checks: Record<string, () => Promise<unknown>> = {
    database: async () => {
      if (!(await ctx.database.ping(CHECK_TIMEOUT_MS))) throw new Error('down');
    },
    blob_store: () => ctx.blobs.ping(),
    [ctx.config.gitHostUrl ? 'git_host' : 'repositories']: () => ctx.repositories.run('repos.ready', {}),
  };
  if (ctx.redis) checks.redis = () => ctx.redis!.ping();
  if (needs.payments) {
    checks.facilitator = async () => (await ctx.rail()).facilitator.getSupported();
    checks.chain = async () => (await ctx.rail()).reader.getBlockNumber();
  }
  const names = Object.keys(checks);
  const states = await Promise.all(names.map((name) => within(checks[name]!)));
  const result = Object.fromEntries(names.map((name, i) => [name, states[i]!]));
  const paused = ctx.pause.paused;
  return { ready: !paused && states.every((state) => state === 'ok'), checks: result, paused };
}

/** The not-ready parts, in words: what an operator reads in the refusal. */
export function notReadyReason(state: Readiness): string {
  const down = Object.entries(state.checks)
    .filter(([, check]) => check === 'down')
    .map(([name]) => name);
  return [
    ...(down.length > 0 ? [`down: ${down.join(', ')}`] : []),
    ...(state.paused ? ['paused by the operator'] : []),
  ].join('; ');
}
