import { execFile } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { generateLargeRepo } from '../test/fixtures/large-repo.js';
import { workRepo } from '../test/releases/support.js';
import {
  publishHostedListing,
  registerCreator,
  type SeededListing,
  type SeedTarget,
} from '../test/support/seed-over-http.js';

const run = promisify(execFile);

/** The benches' listings, seeded as a creator makes them (test/support/seed-over-http.ts). */

/**
 * What the benches sell: `bench-creator/bench-tool` at 9 USD (benchToolRepo's small product)
 * and, with `large`, the free `bench-creator/bench-large` whose zip is about 100 MB.
 */
export async function seedBenchListings(
  server: SeedTarget,
  options: { large: boolean },
): Promise<{ listing: SeededListing; large?: SeededListing; apiKey: string }> {
  const creator = await registerCreator(server, 'bench-creator');
  const toolRepo = await benchToolRepo();
  try {
    const listing = await publishHostedListing(server, creator, {
      slug: 'bench-tool',
      priceMicro: '9000000',
      gitDir: toolRepo,
      version: '1.0.0',
    });
    if (!options.large) return { listing, apiKey: creator.apiKey };
    const large = await publishHostedListing(server, creator, {
      slug: 'bench-large',
      priceMicro: '0',
      gitDir: await largeZipRepo(),
      version: '1.0.0',
    });
    return { listing, large, apiKey: creator.apiKey };
  } finally {
    await rm(toolRepo, { recursive: true, force: true });
    await rm(path.dirname(creator.key.file), { recursive: true, force: true });
  }
}

/**
 * A realistic small product, tagged v1.0.0 in a fresh work tree: 400 TypeScript source files, a
 * README and a package.json with 40 dependencies, so the manifest carries every computed field a
 * real one has (about 38 KB of JSON).
 */
export async function benchToolRepo(): Promise<string> {
  const repo = await workRepo();
  const files: Record<string, string> = {
    'README.md': `# bench-tool\n\n${'A paragraph of README text for the benchmark, with `code` and *emphasis*.\n\n'.repeat(60)}`,
    'package.json': JSON.stringify(
      {
        name: 'bench-tool',
        version: '1.0.0',
        dependencies: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`dep-${i}`, '^1.0.0'])),
      },
      null,
      2,
    ),
  };
  for (let i = 0; i < 400; i++) {
    files[`src/module-${Math.floor(i / 20)}/file-${i}.ts`] =
      `export function f${i}(x: number): number {\n  return x * ${i} + ${i % 7};\n}\n`.repeat(10);
  }
  for (const [name, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(repo.dir, name)), { recursive: true });
    await writeFile(path.join(repo.dir, name), content);
  }
  await repo.git('add', '-A');
  await repo.git('commit', '-q', '-m', 'First release');
  await repo.git('tag', 'v1.0.0');
  return repo.dir;
}

/**
 * A bare repository whose release zip is about 100 MB: 100 binary files of 1 MiB of pseudo-random
 * (incompressible) bytes and one source file, tagged v1.0.0. Generated once and kept in the temp
 * directory, like bench/release-cut.ts's large repository.
 */
async function largeZipRepo(): Promise<string> {
  const gitDir = path.join(os.tmpdir(), 'repo402-bench-100mb.git');
  const tagged = await run('git', ['-C', gitDir, 'rev-parse', '--verify', '-q', 'v1.0.0']).then(
    () => true,
    () => false,
  );
  if (!tagged) {
    await rm(gitDir, { recursive: true, force: true });
    await run('git', ['init', '-q', '--bare', '-b', 'main', gitDir]);
    await generateLargeRepo(gitDir, { files: 101, binaryFiles: 100, totalBytes: 100 * 1024 * 1024 + 8192 });
  }
  return gitDir;
}
