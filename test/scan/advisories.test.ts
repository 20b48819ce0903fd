import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { connectDatabase } from '../../src/db/connect.js';
import { advisories, advisoryPackages } from '../../src/db/schema/index.js';
import { ensureAdvisorySeed, importAdvisories } from '../../src/scan/advisory-import.js';
import { advisoriesFor } from '../../src/scan/advisory-store.js';
import { checkDependencies } from '../../src/scan/dependency-checks.js';
import { buildRepo } from '../fixtures/git-repo.js';
import { BACKENDS, openTestDatabase, type TestDatabase } from '../support/db.js';
import { OsvMirror, osvFixture } from '../support/osv-mirror.js';
import { freePort, ROOT, runCli } from '../support/process.js';

const FIXTURES = path.join(ROOT, 'test/fixtures/osv');
const NOW = new Date('2026-11-22T12:00:00Z');
const run = promisify(execFile);

describe.each(BACKENDS)('advisory import on %s', (backend) => {
  let database: TestDatabase;
  const temp: string[] = [];
  afterEach(async () => {
    await database?.close();
    for (const dir of temp.splice(0)) await rm(dir, { recursive: true, force: true });
  });

  it('imports a directory of real OSV records, idempotently', async () => {
    database = await openTestDatabase(backend);
    expect(await importAdvisories(database.db, FIXTURES, NOW)).toEqual({ read: 3, imported: 3, skipped: 0 });
    expect(await importAdvisories(database.db, FIXTURES, NOW)).toEqual({ read: 3, imported: 0, skipped: 0 });
    const rows = await database.db
      .select({ id: advisories.id, severity: advisories.severity, malicious: advisories.malicious })
      .from(advisories);
    expect(rows.sort((a, b) => a.id.localeCompare(b.id))).toEqual([
      { id: 'GHSA-29mw-wpgm-hmr9', severity: 'MODERATE', malicious: false },
      { id: 'GHSA-8q59-q68h-6hv4', severity: 'CRITICAL', malicious: false },
      { id: 'GHSA-xvch-5gv4-984h', severity: 'CRITICAL', malicious: false },
    ]);
    // minimist has two affected entries; PyPI names are stored normalised.
    expect(await database.db.select().from(advisoryPackages)).toHaveLength(4);
    expect(
      (await advisoriesFor(database.db, [{ ecosystem: 'PyPI', name: 'PyYAML' }])).map((a) => a.id),
    ).toEqual(['GHSA-8q59-q68h-6hv4']);
  });

  it('replaces a record only with a newer one, skips invalid records, drops withdrawn ones from matching', async () => {
    database = await openTestDatabase(backend);
    const dir = await mkdtemp(path.join(os.tmpdir(), 'repo402-osv-'));
    temp.push(dir);
    const record = JSON.parse(await readFile(path.join(FIXTURES, 'GHSA-xvch-5gv4-984h.json'), 'utf8'));
    const file = path.join(dir, 'batch.json');
    await writeFile(
      file,
      JSON.stringify([
        record,
        { id: 'broken' },
        'nonsense',
        { ...record, id: 'X-1', modified: 'not a date' },
      ]),
    );
    expect(await importAdvisories(database.db, file, NOW)).toEqual({ read: 4, imported: 1, skipped: 3 });
    const older = { ...record, modified: '2020-01-01T00:00:00Z', summary: 'older' };
    await writeFile(file, JSON.stringify(older));
    expect(await importAdvisories(database.db, file, NOW)).toMatchObject({ imported: 0 });
    const withdrawn = { ...record, modified: '2030-01-01T00:00:00Z', withdrawn: '2030-01-01T00:00:00Z' };
    await writeFile(file, JSON.stringify(withdrawn));
    expect(await importAdvisories(database.db, file, NOW)).toMatchObject({ imported: 1 });
    expect(await advisoriesFor(database.db, [{ ecosystem: 'npm', name: 'minimist' }])).toEqual([]);
  });

  it('reads an OSV export zip', async () => {
    database = await openTestDatabase(backend);
    const { dir, cleanup } = await buildRepo([
      {
        'GHSA-xvch-5gv4-984h.json': await readFile(path.join(FIXTURES, 'GHSA-xvch-5gv4-984h.json'), 'utf8'),
        'GHSA-8q59-q68h-6hv4.json': await readFile(path.join(FIXTURES, 'GHSA-8q59-q68h-6hv4.json'), 'utf8'),
      },
    ]);
    const zip = path.join(dir, 'all.zip');
    await run('git', ['-C', dir, 'archive', '--format=zip', '-o', zip, 'HEAD']);
    expect(await importAdvisories(database.db, zip, NOW)).toEqual({ read: 2, imported: 2, skipped: 0 });
    await cleanup();
  });

  it('matches versions against imported ranges: HIGH blocks, MODERATE is disclosed, fixed versions pass', async () => {
    database = await openTestDatabase(backend);
    await ensureAdvisorySeed(database.db, NOW);
    await importAdvisories(database.db, FIXTURES, NOW);
    const dep = (ecosystem: 'npm' | 'PyPI', name: string, version: string) => ({
      ecosystem,
      name,
      version,
      direct: true,
      dev: false,
      source: 'lock',
    });
    const { findings, checked } = await checkDependencies(database.db, [
      dep('npm', 'lodash', '4.17.11'),
      dep('npm', 'minimist', '1.2.6'),
      dep('PyPI', 'PyYAML', '5.3.1'),
      dep('PyPI', '3web-py', '1.0.0'),
      { ...dep('npm', 'left-pad', '1.0.0'), version: null as unknown as string },
    ]);
    expect(checked).toBe(4);
    expect(findings.map((f) => [f.check, f.rule_id, f.tier, f.package?.name])).toEqual([
      ['known_vulns', 'GHSA-jf85-cpcp-j695', 'blocking', 'lodash'],
      ['known_vulns', 'GHSA-29mw-wpgm-hmr9', 'disclosed', 'lodash'],
      ['known_vulns', 'GHSA-8q59-q68h-6hv4', 'blocking', 'PyYAML'],
      ['known_malware', 'MAL-2024-9934', 'blocking', '3web-py'],
    ]);
  });
});

describe('repo402 advisories import and sync', { timeout: 240_000 }, () => {
  it('loads records into the embedded database and prints the counts; syncs from OSV_URL by hand', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'repo402-cli-'));
    const mirror = await OsvMirror.start();
    try {
      const result = await runCli(
        ['advisories', 'import', FIXTURES, '--init'],
        { DATA_DIR: dataDir },
        110_000,
      );
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toEqual({ read: 3, imported: 3, skipped: 0 });
      const missing = await runCli(['advisories', 'import', path.join(dataDir, 'nope.json')], {
        DATA_DIR: dataDir,
      });
      expect(missing.code).not.toBe(0);
      expect(missing.stdout).toBe('');
      const database = await connectDatabase({ kind: 'pglite', dataDir: path.join(dataDir, 'db') });
      expect(await database.db.select({ id: advisories.id }).from(advisories)).toHaveLength(3);
      await database.close();

      // A newer revision of one record on the mirror: the sync imports it, and says so on stdout.
      const minimist = osvFixture('GHSA-xvch-5gv4-984h');
      await mirror.publishAll({ npm: [{ ...minimist, modified: '2026-11-20T00:00:00Z' }] });
      const synced = await runCli(['advisories', 'sync'], { DATA_DIR: dataDir, OSV_URL: mirror.url });
      expect(synced.code, synced.stderr).toBe(0);
      const report = JSON.parse(synced.stdout);
      expect(report.ecosystems.map((e: { outcome: string }) => e.outcome)).toEqual([
        'imported',
        'imported',
        'imported',
        'imported',
      ]);
      expect(report).toMatchObject({
        imported: 1,
        dataset: expect.stringMatching(/\+osv\.3\.2026-11-20$/),
        releases: { checked: 0, flagged: 0, changed: 0 },
      });
      // Unreachable: the result on stdout, the warning on stderr, exit status 1.
      const failed = await runCli(['advisories', 'sync'], {
        DATA_DIR: dataDir,
        OSV_URL: `http://127.0.0.1:${await freePort()}`,
      });
      expect(failed.code).toBe(1);
      expect(JSON.parse(failed.stdout)).toMatchObject({ imported: 0, releases: 'unchanged' });
      expect(failed.stderr).toContain('advisory sync failed');
    } finally {
      await mirror.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
