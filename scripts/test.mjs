// `npm test`: the type-check and Biome (`npm run lint`) beside the vitest suite rather than before
// it. The type-check holds one core for about 40 s, which the suite's global setup (templates,
// transpiling) mostly leaves free; run first, it added its whole time to every run. A failing lint
// still fails fast: it stops the suite. Arguments go to vitest.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const start = (command, args) => {
  const child = spawn(command, args, { stdio: 'inherit' });
  const exit = new Promise((resolve) => {
    child.on('error', () => resolve(1));
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
  return { child, exit };
};

const lint = start(npm, ['run', '--silent', 'lint']);
const vitest = path.join(
  path.dirname(createRequire(import.meta.url).resolve('vitest/package.json')),
  'vitest.mjs',
);
const suite = start(process.execPath, [vitest, 'run', ...process.argv.slice(2)]);

const lintCode = await lint.exit;
if (lintCode !== 0) {
  console.error('npm test: the type-check or Biome failed (above); the suite is stopped.');
  suite.child.kill('SIGTERM');
}
const suiteCode = await suite.exit;
process.exit(lintCode !== 0 ? lintCode : suiteCode);
