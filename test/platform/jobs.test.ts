import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { AppContext } from '../../src/context.js';
import { connectDatabase } from '../../src/db/connect.js';
import { JOBS } from '../../src/jobs.js';
import { type AnyJobSpec, JobQueue } from '../../src/platform/jobs.js';
import { createLogger } from '../../src/platform/logger.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { BACKENDS, openTestDatabase } from '../support/db.js';

async function until<T>(probe: () => T | Promise<T>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.each(BACKENDS)('job queue on %s', (backend) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  it('runs a sent job in-process at once, with its data validated', async () => {
    const seen: string[] = [];
    const echo: AnyJobSpec<AppContext> = {
      name: 'test-echo',
      data: z.object({ word: z.string() }),
      run: async (_ctx, data) => {
        seen.push(data.word);
      },
    };
    t = await createTestApp({ backend, jobs: [echo] });
    const started = Date.now();
    await t.ctx.jobs!.send(echo, { word: 'hello' });
    await until(() => seen.length === 1);
    // The in-process nudge starts the job without waiting for the next poll.
    expect(Date.now() - started).toBeLessThan(1500);
    expect(seen).toEqual(['hello']);
    await expect(t.ctx.jobs!.send(echo, { word: 1 } as never)).rejects.toThrow();
  });

  it('retries a failing job until it succeeds', async () => {
    let attempts = 0;
    const flaky: AnyJobSpec<AppContext> = {
      name: 'test-flaky',
      data: z.object({}),
      retryLimit: 3,
      retryDelaySeconds: 1,
      retryBackoff: false,
      run: async () => {
        attempts += 1;
        if (attempts < 2) throw new Error('transient');
      },
    };
    t = await createTestApp({ backend, jobs: [flaky] });
    const id = await t.ctx.jobs!.send(flaky, {});
    await until(async () => (await t.ctx.jobs!.getJob('test-flaky', id!))?.state === 'completed');
    expect(attempts).toBe(2);
  });

  it('keeps one queued job per singleton key on a `short` queue', async () => {
    const slow: AnyJobSpec<AppContext> = {
      name: 'test-singleton',
      policy: 'short',
      data: z.object({ n: z.number() }),
      run: async () => {},
    };
    t = await createTestApp({ backend, jobs: [slow] });
    const first = await t.ctx.jobs!.send(slow, { n: 1 }, { singletonKey: 'k', startAfterSeconds: 60 });
    const second = await t.ctx.jobs!.send(slow, { n: 2 }, { singletonKey: 'k', startAfterSeconds: 60 });
    expect(first).toBeTruthy();
    expect(second).toBeNull();
  });

  it('drops the outcome of a job that outlives shutdown instead of writing to a closed database', async () => {
    let release!: () => void;
    let started = false;
    const stuck: AnyJobSpec<AppContext> = {
      name: 'test-stuck',
      data: z.object({}),
      run: async () => {
        started = true;
        await new Promise<void>((resolve) => {
          release = resolve;
        });
        throw new Error('finished late');
      },
    };
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown) => rejections.push(reason);
    process.on('unhandledRejection', onRejection);
    try {
      t = await createTestApp({ backend, jobs: [stuck] });
      await t.ctx.jobs!.send(stuck, {});
      await until(() => started);
      await t.close(); // waits 2 s for the job, then closes the database under it
      release();
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(rejections).toEqual([]);
    } finally {
      process.off('unhandledRejection', onRejection);
      t = undefined as never;
    }
  });
});

describe.runIf(BACKENDS.includes('postgres'))('job queue setup on postgres', () => {
  it('lets several processes open the queues of a fresh database at once', async () => {
    // Creating a queue adds a partition with a foreign key to the queue table; two processes doing
    // that at once deadlock unless setup is serialised.
    const shared = await openTestDatabase('postgres');
    const processes = await Promise.all(
      Array.from({ length: 4 }, () => connectDatabase({ kind: 'postgres', url: shared.url!, poolSize: 4 })),
    );
    const log = createLogger('silent');
    try {
      const queues = await Promise.all(processes.map((database) => JobQueue.open(database, JOBS, log)));
      await Promise.all(queues.map((queue) => queue.stop(1000)));
      const { rows } = await shared.query<{ name: string }>('select name from pgboss.queue');
      expect(rows.map((row) => row.name)).toEqual(expect.arrayContaining(JOBS.map((spec) => spec.name)));
    } finally {
      await Promise.all(processes.map((database) => database.close()));
      await shared.close();
    }
  });
});
