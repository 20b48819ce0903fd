import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/context.js';
import { inspectRelease } from '../../src/releases/inspection/inspect.js';
import { toPublicScan } from '../../src/scan/report.js';
import { buildRepo } from '../fixtures/git-repo.js';
import { temporaryBlobStore } from '../support/blobs.js';
import { ManualClock } from '../support/clock.js';
import { openTestDatabase, type TestDatabase } from '../support/db.js';

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

describe('a release holding documented example credentials', () => {
  let database: TestDatabase;
  afterEach(async () => database?.close());

  // Worker threads, as a cut runs them: the notes cross from the file pass to the report.
  it('passes with a note for each allowed example, and the public scan shows none of them', {
    timeout: 120_000,
  }, async () => {
    database = await openTestDatabase('pglite');
    const clock = new ManualClock();
    const { blobs, cleanup } = await temporaryBlobStore();
    cleanups.push(cleanup);
    const ctx = { database, clock, config: { cutWorkerTimeoutMs: 120_000 }, blobs } as unknown as AppContext;
    const built = await buildRepo([
      {
        'README.md': '# Tool\n\nConfigure the AWS CLI as in its documentation.\n',
        'docs/aws.md': [
          '```ini',
          '[default]',
          'aws_access_key_id = AKIAIOSFODNN7EXAMPLE',
          'aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
          '```',
          '',
        ].join('\n'),
      },
    ]);
    cleanups.push(built.cleanup);
    const result = await inspectRelease(
      ctx,
      {
        repoPath: built.dir,
        commit: built.shas[0]!,
        listing: { id: 'listing-a', owner: 'ada', slug: 'aws-tool' },
        version: '1.0.0',
        publishedAt: clock.now(),
        previous: [],
      },
      { workers: 1 },
    );
    expect(result.verdict).toBe('pass');
    expect(result.scan.counts.blocking).toBe(0);
    expect(result.scan.checks.find((c) => c.id === 'secrets')).toMatchObject({ status: 'pass', findings: 0 });
    expect(result.scan.findings.filter((f) => f.check === 'secrets')).toEqual([]);
    expect(result.scan.notes!.map((n) => [n.kind, n.rule_id, n.path, n.line, n.hint])).toEqual([
      ['allowed_example', 'aws-access-key-id', 'docs/aws.md', 3, 'AKIA…(20 chars)'],
      ['allowed_example', 'aws-secret-access-key', 'docs/aws.md', 4, 'wJal…(40 chars)'],
    ]);
    expect(result.scan.notes_omitted).toBe(0);
    expect(JSON.stringify(toPublicScan(result.scan))).not.toContain('allowed_example');
  });
});
