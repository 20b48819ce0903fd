import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoPath } from '../../src/git/repos.js';
import { cutJob } from '../../src/releases/cut-job.js';
import { findRelease } from '../../src/releases/store.js';
import { bearer, registerCreator } from '../identity/support.js';
import { createHostedListing, sshKeygen } from '../listings/support.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { watchResponsiveness } from '../support/responsiveness.js';
import { eventually } from './support.js';

/**
 * Issue 13, item 11: a cut near the limits must never stall the API. A repository of ~196 MiB
 * and 19,000 files (text and binary) is generated into the listing's bare repository, cut by the
 * real job on the embedded database (PGlite runs on the main thread, like the API), while the
 * event loop's delay is sampled and /api/health is polled. The bound is a correctness bound:
 * one stall over 200 ms is a failure.
 */
const FILES = 19_000;
const BINARY_FILES = 40;
const BINARY_BYTES = 1024 * 1024;
const TOTAL_BYTES = 196 * 1024 * 1024;
const MAX_DELAY_MS = 200;

/** Streams a whole tree into `git fast-import` (one commit, one annotated tag), without a work tree. */
async function generateInto(gitDir: string): Promise<void> {
  const child = spawn('git', ['-C', gitDir, '-c', 'core.compression=1', 'fast-import', '--quiet'], {
    stdio: ['pipe', 'ignore', 'pipe'],
    env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', HOME: gitDir },
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  const write = (data: string | Buffer) =>
    child.stdin.write(data) ? Promise.resolve() : new Promise<void>((r) => child.stdin.once('drain', r));

  let state = 42;
  const next = () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state >>> 8;
  };
  const words = Array.from(
    { length: 4000 },
    (_, i) =>
      `${['get', 'set', 'load', 'parse', 'render', 'user', 'item', 'cache'][i % 8]}${(i * 2654435761) % 99991}`,
  );
  const text = (bytes: number, code: boolean) => {
    const lines: string[] = [];
    let size = 0;
    while (size < bytes) {
      const picked = Array.from({ length: 4 + (next() % 9) }, () => words[next() % words.length]);
      const line = code ? `  const ${picked[0]} = ${picked.slice(1).join(' + ')};` : picked.join(' ');
      lines.push(line);
      size += line.length + 1;
    }
    return Buffer.from(`${lines.join('\n')}\n`);
  };
  const textFiles = FILES - BINARY_FILES;
  const perText = Math.floor((TOTAL_BYTES - BINARY_FILES * BINARY_BYTES) / textFiles);
  const files: string[] = [];
  const blob = async (mark: number, content: Buffer) => {
    await write(`blob\nmark :${mark}\ndata ${content.length}\n`);
    await write(content);
    await write('\n');
  };
  for (let i = 0; i < textFiles; i++) {
    const doc = i % 5 === 0;
    files.push(`pkg${i % 50}/mod${i % 400}/${doc ? `note${i}.md` : `file${i}.ts`}`);
    await blob(files.length, text(perText - 40, !doc));
  }
  for (let i = 0; i < BINARY_FILES; i++) {
    const buffer = Buffer.alloc(BINARY_BYTES);
    let x = i + 1;
    for (let j = 0; j < buffer.length; j += 4) {
      x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
      buffer.writeUInt32LE(x, j);
    }
    buffer[0] = 0;
    files.push(`assets/blob${i}.bin`);
    await blob(files.length, buffer);
  }
  const who = 'Creator <creator@example.com> 1793527200 +0000';
  await write(`commit refs/heads/main\nmark :${files.length + 1}\ncommitter ${who}\ndata 5\nbig!\n`);
  for (let i = 0; i < files.length; i++) await write(`M 100644 :${i + 1} ${files[i]}\n`);
  await write(`\ntag v1.0.0\nfrom :${files.length + 1}\ntagger ${who}\ndata 8\nRelease\n\n`);
  child.stdin.end();
  const code = await exited;
  if (code !== 0) throw new Error(`git fast-import failed (${code}): ${stderr}`);
}

describe('a cut near the size limits', () => {
  let t: TestApp;
  let watch: ReturnType<typeof watchResponsiveness> | undefined;
  beforeAll(async () => {
    t = await createTestApp({ backend: 'pglite', jobs: [cutJob] });
  });
  afterAll(async () => {
    await watch?.stop();
    await t?.close();
  });

  it(`keeps every event-loop stall under ${MAX_DELAY_MS} ms and answers /api/health throughout`, {
    timeout: 240_000,
  }, async () => {
    const creator = await registerCreator(t);
    const key = await sshKeygen();
    const listing = await createHostedListing(t, creator.apiKey, key.publicKey);
    await generateInto(repoPath(t.config, listing.owner, listing.slug));

    watch = watchResponsiveness(t);
    const started = performance.now();
    const sync = await t.app.inject({
      method: 'POST',
      url: `/api/listings/${listing.id}/sync`,
      headers: bearer(creator.apiKey),
      payload: {},
    });
    expect(sync.statusCode, sync.body).toBe(202);
    const release = await eventually(async () => {
      const row = await findRelease(t.ctx.database.db, listing.id, '1.0.0');
      return row && row.verdict !== 'pending' ? row : undefined;
    }, 200_000);
    const cutMs = performance.now() - started;
    const seen = await watch.stop();
    const summary = `cut of ${FILES} files in ${(cutMs / 1000).toFixed(1)} s; ${seen.summary}`;
    expect(release.verdict, summary).toBe('pass');
    expect(release.sizeBytes).toBeGreaterThan(0);
    expect(seen.maxDelayMs, summary).toBeLessThan(MAX_DELAY_MS);
    expect(seen.statuses).toEqual([200]);
    expect(seen.healthMs.length, summary).toBeGreaterThan(10);
    expect(Math.max(...seen.healthMs), summary).toBeLessThan(1000);
  });
});
