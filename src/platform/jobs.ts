import type { FastifyBaseLogger } from 'fastify';
import PgBoss from 'pg-boss';
import type { z } from 'zod';
import type { Database } from '../db/connect.js';

/**
 * Background work on pg-boss, in the same database as everything else (PGlite or PostgreSQL).
 * `serve` runs the workers in-process by default; `repo402 worker` runs them alone, on any number
 * of machines sharing a PostgreSQL database.
 *
 * Jobs are sent after the transaction that makes them necessary has committed; each domain keeps
 * the durable state (a release `queued`, a payment `settling`) and a periodic job re-sends work a
 * crash may have dropped, so a job is a nudge, never the only record.
 */

/** A job whose handler runs with context `C` (the app's `AppContext`; the queue does not look inside). */
export interface JobSpec<T, C> {
  name: string;
  data: z.ZodType<T>;
  run(ctx: C, data: T, job: { id: string; retryCount: number }): Promise<void>;
  retryLimit?: number;
  retryDelaySeconds?: number;
  retryBackoff?: boolean;
  expireInSeconds?: number;
  /** A cron expression for periodic jobs (reconcilers, sweeps), evaluated in UTC. */
  cron?: string;
  /**
   * pg-boss queue policy: `short` keeps at most one queued job per singleton key, `singleton` at most
   * one active, `stately` one of each. `standard` (the default) does not deduplicate by key.
   */
  policy?: PgBoss.QueuePolicy;
  /**
   * Runs only in a process that keeps the hosted repositories (the git host, or any process
   * without GIT_HOST_URL): a release cut reads the repository on disk.
   */
  needsRepositories?: boolean;
}

// A table of specs of any data type; each one parses its own data before running.
// biome-ignore lint/suspicious/noExplicitAny: heterogeneous registry, narrowed by each spec's zod schema
export type AnyJobSpec<C> = JobSpec<any, C>;

export const PGBOSS_SCHEMA = 'pgboss';

/** Any fixed 64-bit key, the same in every repo402 process (the migrations use 4020402). */
const QUEUE_SETUP_LOCK_KEY = 4020403;

/**
 * pg-boss talks to our database through this adapter, so it works on PGlite as on PostgreSQL.
 * pg-boss records a job's outcome without awaiting it; a handler that outlives `stop()` would
 * then write to a closed database and raise an unhandled rejection. Once stopped, the adapter
 * drops such late writes: shutdown already marked those jobs failed, and they are retried.
 */
function bossAdapter(database: Database, log: FastifyBaseLogger) {
  let stopped = false;
  const db: PgBoss.Db = {
    async executeSql(text, values) {
      if (stopped) {
        log.warn(
          'a job finished after the queue stopped; it was marked failed at shutdown and will be retried',
        );
        // What a completion command answers when it changed nothing.
        return { rows: [{ count: 0 }] };
      }
      return values && values.length > 0 ? database.query(text, values) : database.execScript(text);
    },
  };
  return { db, markStopped: () => (stopped = true) };
}

export interface SendOptions {
  /** With a deduplicating queue policy: at most one job per key (for example one cut per listing and version). */
  singletonKey?: string;
  startAfterSeconds?: number;
}

export class JobQueue<C> {
  private readonly workerIds = new Map<string, string>();

  private constructor(
    private readonly database: Database,
    private readonly boss: PgBoss,
    private readonly specs: AnyJobSpec<C>[],
    private readonly markStopped: () => void,
  ) {}

  static async open<C>(
    database: Database,
    specs: AnyJobSpec<C>[],
    log: FastifyBaseLogger,
  ): Promise<JobQueue<C>> {
    const adapter = bossAdapter(database, log);
    const boss = new PgBoss({ db: adapter.db, schema: PGBOSS_SCHEMA });
    boss.on('error', (error) => log.error({ err: error }, 'job queue error'));
    // Creating a queue attaches a partition with a foreign key to pg-boss's queue table; two
    // processes doing that at once deadlock, so setup runs one process at a time.
    await database.withAdvisoryLock(QUEUE_SETUP_LOCK_KEY, async () => {
      await boss.start();
      for (const spec of specs) {
        const options = {
          name: spec.name,
          policy: spec.policy ?? 'standard',
          retryLimit: spec.retryLimit ?? 5,
          retryDelay: spec.retryDelaySeconds ?? 5,
          retryBackoff: spec.retryBackoff ?? true,
          expireInSeconds: spec.expireInSeconds ?? 15 * 60,
        };
        // Creating leaves an existing queue as it was; the update makes it what the code says now.
        await boss.createQueue(spec.name, options);
        await boss.updateQueue(spec.name, options);
      }
    });
    return new JobQueue(database, boss, specs, adapter.markStopped);
  }

  async send<T>(spec: JobSpec<T, C>, data: T, options: SendOptions = {}): Promise<string | null> {
    const id = await this.boss.send(spec.name, spec.data.parse(data) as object, {
      singletonKey: options.singletonKey,
      startAfter: options.startAfterSeconds,
    });
    // A worker in this process starts at once instead of waiting for its next poll.
    const workerId = this.workerIds.get(spec.name);
    if (workerId) this.boss.notifyWorker(workerId);
    return id;
  }

  /** Starts a worker per job that `runsHere` (all by default), and the schedules of periodic ones. */
  async startWorkers(
    ctx: C,
    log: FastifyBaseLogger,
    runsHere: (spec: AnyJobSpec<C>) => boolean = () => true,
  ): Promise<void> {
    for (const spec of this.specs.filter(runsHere)) {
      const workerId = await this.boss.work(
        spec.name,
        { pollingIntervalSeconds: 1, batchSize: 1, includeMetadata: true },
        async ([job]) => {
          if (!job) return;
          try {
            await spec.run(ctx, spec.data.parse(job.data), { id: job.id, retryCount: job.retryCount });
          } catch (error) {
            log.warn({ err: error, job: spec.name, jobId: job.id, retry: job.retryCount }, 'job failed');
            throw error;
          }
        },
      );
      this.workerIds.set(spec.name, workerId);
      if (spec.cron) await this.boss.schedule(spec.name, spec.cron, {}, { tz: 'UTC' });
    }
  }

  /**
   * Fails the jobs of `specs` still marked active, so their retries run now rather than after their
   * expiry (half an hour for a cut). Only for a process that alone runs those jobs, before its
   * workers start: whatever is active then was left by its own previous run, killed mid-job.
   */
  async failOrphaned(runsHere: (spec: AnyJobSpec<C>) => boolean, log: FastifyBaseLogger): Promise<void> {
    for (const spec of this.specs.filter(runsHere)) {
      const active = await this.database.query<{ id: string }>(
        `select id from ${PGBOSS_SCHEMA}.job where name = $1 and state = 'active'`,
        [spec.name],
      );
      const ids = active.rows.map((row) => row.id);
      if (ids.length === 0) continue;
      for (const id of ids) {
        await this.boss.fail(spec.name, id, { reason: 'its process stopped before the job finished' });
      }
      log.warn({ job: spec.name, jobIds: ids }, 'jobs left running by a previous run are retried');
    }
  }

  /** Lets running jobs finish (up to `timeoutMs`), then stops polling. The database stays open. */
  async stop(timeoutMs = 10_000): Promise<void> {
    await this.boss.stop({ graceful: true, wait: true, close: false, timeout: timeoutMs });
    this.markStopped();
  }

  /** Jobs waiting to run (created or waiting to retry), per queue, for the queue-depth gauge. */
  async depths(): Promise<Map<string, number>> {
    const waiting = await this.database.query<{ name: string; count: number }>(
      `select name, count(*)::int as count from ${PGBOSS_SCHEMA}.job where state in ('created', 'retry') group by name`,
    );
    const depths = new Map(this.specs.map((spec) => [spec.name, 0]));
    for (const row of waiting.rows) if (depths.has(row.name)) depths.set(row.name, row.count);
    return depths;
  }

  /** For tests and the operator: the state of one job. */
  getJob(name: string, id: string) {
    return this.boss.getJobById(name, id, { includeArchive: true });
  }
}
