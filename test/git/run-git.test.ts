import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/process.js';

const run = promisify(execFile);

/**
 * A server near its open-file limit (an SSH flood holds hundreds of sockets) asked git to run: the
 * system refuses the spawn with EMFILE. The process must answer that request with an error and go
 * on serving, not die of an error event nobody listened to.
 */
describe('git started with no file descriptors left', () => {
  it('rejects with a GitError and leaves the process running', { timeout: 60_000 }, async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'repo402-emfile-'));
    try {
      const script = path.join(dir, 'emfile.mts');
      await writeFile(
        script,
        `import { closeSync, openSync } from 'node:fs';
import { GitError, runGit } from ${JSON.stringify(path.join(ROOT, 'src/git/run-git.ts'))};
const held: number[] = [];
try {
  for (;;) held.push(openSync('/dev/null', 'r'));
} catch {}
const outcome = await runGit(['--version']).then(
  () => 'ran',
  (error: unknown) => (error instanceof GitError ? 'GitError' : \`other: \${(error as Error).message}\`),
);
for (const fd of held) closeSync(fd);
// Node reports a refused spawn on the next tick: the process must still be here after it.
await new Promise((resolve) => setTimeout(resolve, 200));
console.log(outcome);
`,
      );
      const { stdout } = await run(
        'prlimit',
        ['--nofile=256:256', process.execPath, '--import', 'tsx', script],
        {
          cwd: ROOT,
        },
      );
      expect(stdout.trim()).toBe('GitError');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
