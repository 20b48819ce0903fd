import { defineConfig } from 'vitest/config';

/**
 * Files named `*.timing.test.ts` assert how long the service keeps its event loop busy. They run
 * alone, after everything else: with another test file on the second core, the OS alone can hold a
 * busy process off the CPU for longer than the bound (a 227 ms stall was seen in a full run whose
 * slowest main-thread task, profiled, was 84 ms), and that measures the machine, not repo402.
 */
const TIMING = 'test/**/*.timing.test.ts';

export default defineConfig({
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'suite',
          include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
          exclude: [TIMING, '**/node_modules/**'],
          // Three workers on the 2-core CI machine: a worker spends much of a test waiting on the
          // processes it starts (git, ssh, servers, PostgreSQL), and a third one fills that time.
          // Measured with PostgreSQL and Redis: 855 s for the whole `npm test` (1,927 tests)
          // against 1,282 s for vitest alone with two (1,882 tests); each worker peaks near 1.7 GB.
          maxWorkers: 3,
          // A worker imports the service's module graph once, not once per file: isolating each
          // file cost about 2.5 s of imports per file (a sixth of the run). Tests share no module
          // state: every app, database and server is made per test and closed after it.
          isolate: false,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'timing',
          include: [TIMING],
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
