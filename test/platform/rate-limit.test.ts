import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { RateLimitClass } from '../../src/config.js';
import { rateLimitConfig } from '../../src/platform/limits/rate-limit.js';
import {
  LOG_RECOVERY_AFTER_MS,
  REDIS_COMMAND_TIMEOUT_MS,
} from '../../src/platform/limits/rate-limit-counters.js';
import { createTestApp, RATE_LIMIT_STORES, type TestApp } from '../support/app.js';
import { type ManagedProcess, startPrivateRedis } from '../support/cluster.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(RATE_LIMIT_STORES)('rate limits in $store', ({ env }) => {
  let t: TestApp;
  let path: string;
  afterEach(async () => t?.close());

  async function appWith(routeClass: RateLimitClass, extraEnv: Record<string, string> = {}) {
    // A fresh path per test keeps counters apart in a shared Redis.
    path = `/test/limited/${randomUUID()}`;
    t = await createTestApp({
      env: { ...env, ...extraEnv },
      extend: (app, ctx) => {
        app.get(
          path,
          {
            config: rateLimitConfig(ctx.config, routeClass),
            schema: { response: { 200: z.object({ ok: z.boolean() }) } },
          },
          async () => ({ ok: true }),
        );
      },
    });
  }

  it('answers 429 rate_limited with retry_after_seconds and retry-after once the window is used up', async () => {
    await appWith('public', { RATE_LIMIT_PUBLIC: '3/30' });
    for (let i = 0; i < 3; i++) expect((await t.app.inject({ url: path })).statusCode).toBe(200);
    const res = await t.app.inject({ url: path });
    expect(res.statusCode).toBe(429);
    const body = res.json();
    expect(body).toMatchObject({
      code: 'rate_limited',
      docs_url: 'http://repo402.test/docs/errors#rate_limited',
      retry_after_seconds: expect.any(Number),
    });
    expect(body.retry_after_seconds).toBeGreaterThan(25);
    expect(body.retry_after_seconds).toBeLessThanOrEqual(30);
    expect(res.headers['retry-after']).toBe(String(body.retry_after_seconds));
  });

  it('uses fixed windows: requests while limited do not extend the window', async () => {
    await appWith('public', { RATE_LIMIT_PUBLIC: '2/2' });
    expect((await t.app.inject({ url: path })).statusCode).toBe(200);
    expect((await t.app.inject({ url: path })).statusCode).toBe(200);
    await sleep(1000);
    expect((await t.app.inject({ url: path })).statusCode).toBe(429);
    await sleep(1200);
    // A sliding or self-extending window would still refuse here.
    expect((await t.app.inject({ url: path })).statusCode).toBe(200);
  });

  it('counts each client address separately', async () => {
    await appWith('public', { RATE_LIMIT_PUBLIC: '1/30' });
    expect((await t.app.inject({ url: path, remoteAddress: '10.0.0.1' })).statusCode).toBe(200);
    expect((await t.app.inject({ url: path, remoteAddress: '10.0.0.1' })).statusCode).toBe(429);
    expect((await t.app.inject({ url: path, remoteAddress: '10.0.0.2' })).statusCode).toBe(200);
  });

  it('keeps a budget per route, and tells the client what is left of it', async () => {
    const other = `/test/limited/${randomUUID()}`;
    t = await createTestApp({
      env: { ...env, RATE_LIMIT_PUBLIC: '2/30' },
      extend: (app, ctx) => {
        for (const route of [`${other}/a`, `${other}/b`]) {
          app.get(route, { config: rateLimitConfig(ctx.config, 'public') }, async () => ({ ok: true }));
        }
      },
    });
    const first = await t.app.inject({ url: `${other}/a` });
    expect(first.headers['x-ratelimit-limit']).toBe('2');
    expect(first.headers['x-ratelimit-remaining']).toBe('1');
    expect(Number(first.headers['x-ratelimit-reset'])).toBeGreaterThan(25);
    expect((await t.app.inject({ url: `${other}/a` })).headers['x-ratelimit-remaining']).toBe('0');
    expect((await t.app.inject({ url: `${other}/a` })).statusCode).toBe(429);
    expect((await t.app.inject({ url: `${other}/b` })).statusCode).toBe(200);
  });

  it("counts a GET route's HEAD in the same budget", async () => {
    await appWith('public', { RATE_LIMIT_PUBLIC: '2/30' });
    const get = await t.app.inject({ url: path });
    const head = await t.app.inject({ method: 'HEAD', url: path });
    expect([get.statusCode, head.statusCode]).toEqual([200, 200]);
    expect(head.headers['x-ratelimit-remaining']).toBe('0');
    expect((await t.app.inject({ url: path })).statusCode).toBe(429);
    expect((await t.app.inject({ method: 'HEAD', url: path })).statusCode).toBe(429);
  });

  it('counts an IPv6 client by its /64: rotating addresses inside it does not renew the budget', async () => {
    await appWith('public', { RATE_LIMIT_PUBLIC: '2/30' });
    const from = (remoteAddress: string) => t.app.inject({ url: path, remoteAddress });
    expect((await from('2001:db8:7:8::1')).statusCode).toBe(200);
    expect((await from('2001:db8:7:8:ffff:1:2:3')).statusCode).toBe(200);
    expect((await from('2001:DB8:7:8::9')).statusCode).toBe(429);
    // The next /64 is another client.
    expect((await from('2001:db8:7:9::1')).statusCode).toBe(200);
  });

  it('limits registration to 5 per hour per IP', async () => {
    await appWith('registration');
    for (let i = 0; i < 5; i++) expect((await t.app.inject({ url: path })).statusCode).toBe(200);
    const res = await t.app.inject({ url: path });
    expect(res.statusCode).toBe(429);
    expect(res.json().retry_after_seconds).toBeGreaterThan(3500);
  });
});

/** Log lines that contain `text`. */
const linesWith = (lines: string[], text: string) => lines.filter((line) => line.includes(text));

/** An app on `redisUrl` with one public route at `path` limited to `budget`, and the log lines it writes. */
async function appLimitedOnRedis(redisUrl: string, path: string, budget: string) {
  const lines: string[] = [];
  const t = await createTestApp({
    env: { REDIS_URL: redisUrl, RATE_LIMIT_PUBLIC: budget, LOG_LEVEL: 'info' },
    logDestination: { write: (line: string) => lines.push(line) },
    extend: (app, ctx) => {
      app.get(path, { config: rateLimitConfig(ctx.config, 'public') }, async () => ({ ok: true }));
    },
  });
  return { t, lines, path };
}

describe('rate limits when Redis stops and comes back', () => {
  let redis: ManagedProcess | undefined;
  afterEach(async () => redis?.stop());

  it('keep limiting in each process while Redis is down, say so in the log, and share again once it is back', async () => {
    redis = await startPrivateRedis();
    const { t, lines, path } = await appLimitedOnRedis(redis.url!, '/test/limited/failover', '3/60');
    const statuses = async (n: number) => {
      const seen: number[] = [];
      for (let i = 0; i < n; i++) seen.push((await t.app.inject({ url: path })).statusCode);
      return seen;
    };
    try {
      expect(await statuses(2)).toEqual([200, 200]);
      await redis.kill('SIGKILL');
      // Counted here alone from now on: a fresh window of 3, then refused; never a failure.
      expect(await statuses(4)).toEqual([200, 200, 200, 429]);
      expect(linesWith(lines, 'Redis unreachable')).toHaveLength(1);

      await redis.start();
      const deadline = Date.now() + 10_000;
      while (t.ctx.redis!.status !== 'ready' && Date.now() < deadline) await sleep(100);
      // The restarted Redis kept nothing: a shared window of 3 again.
      expect(await statuses(4)).toEqual([200, 200, 200, 429]);
      expect(await t.ctx.redis!.keys('repo402:rl:*')).not.toHaveLength(0);
      // Said in the log once it has answered for a while with no failure between.
      expect(linesWith(lines, 'Redis answers again')).toHaveLength(0);
      await sleep(LOG_RECOVERY_AFTER_MS + 100);
      expect(await statuses(1)).toEqual([429]);
      expect(linesWith(lines, 'Redis answers again')).toHaveLength(1);
    } finally {
      await t.close();
    }
  });
});

describe('rate limits when Redis keeps its connection but stops answering', () => {
  let redis: ManagedProcess | undefined;
  afterEach(async () => {
    const pid = redis?.pid();
    if (pid) process.kill(pid, 'SIGCONT');
    await redis?.stop();
  });

  it('answers without waiting on it: at most the command timeout once, then counted here, and shared again once it answers', async () => {
    redis = await startPrivateRedis();
    const { t, lines, path } = await appLimitedOnRedis(redis.url!, '/test/limited/stalled', '3/60');
    const timed = async () => {
      const started = performance.now();
      const res = await t.app.inject({ url: path });
      return { status: res.statusCode, ms: performance.now() - started };
    };
    try {
      expect((await timed()).status).toBe(200);
      // Frozen: its sockets stay open and nothing is answered, as with a blocked Redis or a
      // connection half-open after a partition. Without a command timeout this request never ends.
      process.kill(redis.pid()!, 'SIGSTOP');
      const first = await timed();
      expect(first.status).toBe(200);
      expect(first.ms).toBeLessThan(REDIS_COMMAND_TIMEOUT_MS + 2000);
      // The next ones count in this process at once (a fresh window of 3): none meets the timeout.
      const next = [await timed(), await timed(), await timed()];
      expect(next.map((r) => r.status)).toEqual([200, 200, 429]);
      for (const r of next) expect(r.ms).toBeLessThan(REDIS_COMMAND_TIMEOUT_MS);
      expect(linesWith(lines, 'Redis unreachable')).toHaveLength(1);

      process.kill(redis.pid()!, 'SIGCONT');
      await t.ctx.redis!.del(await t.ctx.redis!.keys('repo402:rl:*'));
      // Asked again a second after the failure, it answers: counts are shared again.
      await sleep(1100);
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await timed()).status);
      expect(statuses).toEqual([200, 200, 200, 429]);
      await sleep(LOG_RECOVERY_AFTER_MS + 100);
      expect((await timed()).status).toBe(429);
      expect(linesWith(lines, 'Redis answers again')).toHaveLength(1);
    } finally {
      await t.close();
    }
  });

  it('drops a connection that keeps timing out for a new one, and no request waits on it meanwhile', async () => {
    redis = await startPrivateRedis();
    const { t, lines, path } = await appLimitedOnRedis(redis.url!, '/test/limited/half-open', '100/60');
    const waited = async () => {
      const started = performance.now();
      expect((await t.app.inject({ url: path })).statusCode).toBe(200);
      return performance.now() - started;
    };
    try {
      await waited();
      process.kill(redis.pid()!, 'SIGSTOP');
      // Requests in flight together all meet the timeout at once: that alone keeps the connection.
      const burst = await Promise.all(Array.from({ length: 5 }, waited));
      expect(
        burst.every((ms) => ms >= REDIS_COMMAND_TIMEOUT_MS - 10),
        burst.join(', '),
      ).toBe(true);
      expect(linesWith(lines, 'dropping the connection')).toHaveLength(0);
      // Then one request a second asks Redis again. On a connection that stays frozen (half-open
      // after a partition looks the same) each would wait the whole timeout until the kernel gave up.
      const asks: number[] = [];
      for (let i = 0; i < 5; i++) {
        await sleep(1100);
        asks.push(await waited());
      }
      expect(
        asks.slice(0, 2).every((ms) => ms >= REDIS_COMMAND_TIMEOUT_MS - 10),
        asks.join(', '),
      ).toBe(true);
      // Timing out for over two seconds by the second ask, the connection is made again, and not
      // asked until it is ready.
      expect(
        asks.slice(2).every((ms) => ms < REDIS_COMMAND_TIMEOUT_MS / 2),
        asks.join(', '),
      ).toBe(true);
      expect(linesWith(lines, 'dropping the connection')).toHaveLength(1);

      process.kill(redis.pid()!, 'SIGCONT');
      const deadline = Date.now() + 10_000;
      while (t.ctx.redis!.status !== 'ready' && Date.now() < deadline) await sleep(100);
      expect(t.ctx.redis!.status).toBe('ready');
      await waited();
      await sleep(LOG_RECOVERY_AFTER_MS + 100);
      await waited();
      expect(linesWith(lines, 'Redis answers again')).toHaveLength(1);
    } finally {
      await t.close();
    }
  });

  it('logs a Redis whose answers come and go once, and its return once it has answered for a while', async () => {
    redis = await startPrivateRedis();
    const { t, lines, path } = await appLimitedOnRedis(redis.url!, '/test/limited/flapping', '100/60');
    const ok = async () => expect((await t.app.inject({ url: path })).statusCode).toBe(200);
    try {
      await ok();
      // Latency at the timeout: one call in a few fails, the next ones are answered.
      for (let i = 0; i < 3; i++) {
        process.kill(redis.pid()!, 'SIGSTOP');
        await ok();
        process.kill(redis.pid()!, 'SIGCONT');
        await sleep(1100);
        await ok();
      }
      expect(linesWith(lines, 'Redis unreachable')).toHaveLength(1);
      expect(linesWith(lines, 'Redis answers again')).toHaveLength(0);
      await sleep(LOG_RECOVERY_AFTER_MS + 100);
      await ok();
      expect(linesWith(lines, 'Redis answers again')).toHaveLength(1);
      expect(linesWith(lines, 'dropping the connection')).toHaveLength(0);
    } finally {
      await t.close();
    }
  });
});
