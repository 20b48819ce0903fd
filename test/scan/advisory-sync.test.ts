import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { advisories, advisorySync } from '../../src/db/schema/index.js';
import { advisoryDatasetStamp } from '../../src/scan/advisory-store.js';
import { type SyncOptions, syncAdvisories } from '../../src/scan/advisory-sync.js';
import { advisoriesStale, osvStamp } from '../../src/scan/dependency-checks.js';
import { BACKENDS, openTestDatabase, type TestDatabase } from '../support/db.js';
import { exportZip, OsvMirror, osvFixture } from '../support/osv-mirror.js';
import { freePort } from '../support/process.js';

const NOW = new Date('2026-11-22T12:00:00Z');
const MINIMIST = osvFixture('GHSA-xvch-5gv4-984h');
const LODASH = osvFixture('GHSA-29mw-wpgm-hmr9');
const PYYAML = osvFixture('GHSA-8q59-q68h-6hv4');

describe.each(BACKENDS)('advisory sync from an OSV mirror on %s', (backend) => {
  let database: TestDatabase;
  let mirror: OsvMirror;
  let tempDir: string;
  let warnings: Array<{ obj: object; msg: string }>;
  afterEach(async () => {
    await database?.close();
    await mirror?.close();
    await rm(tempDir, { recursive: true, force: true });
  });

  const open = async () => {
    database = await openTestDatabase(backend);
    mirror = await OsvMirror.start();
    tempDir = await mkdtemp(path.join(os.tmpdir(), 'repo402-osv-sync-'));
    warnings = [];
  };
  const options = (baseUrl = mirror.url): SyncOptions => ({
    baseUrl,
    tempDir,
    now: () => NOW,
    log: { info: () => {}, warn: (obj, msg) => warnings.push({ obj, msg }) },
  });
  const storedIds = async () =>
    (await database.db.select({ id: advisories.id }).from(advisories)).map((r) => r.id).sort();

  it('imports every ecosystem the analysis reads, then asks with the stored validators and imports nothing on 304', async () => {
    await open();
    await mirror.publishAll({ npm: [MINIMIST, LODASH], PyPI: [PYYAML] });
    const first = await syncAdvisories(database.db, options());
    expect(first.ecosystems.map((e) => [e.ecosystem, e.outcome, e.import?.imported])).toEqual([
      ['npm', 'imported', 2],
      ['PyPI', 'imported', 1],
      ['crates.io', 'imported', 0],
      ['Go', 'imported', 0],
    ]);
    expect(first.imported).toBe(3);
    expect(first.ecosystems[2]!.url).toBe(`${mirror.url}/crates.io/all.zip`);
    expect(await storedIds()).toEqual(['GHSA-29mw-wpgm-hmr9', 'GHSA-8q59-q68h-6hv4', 'GHSA-xvch-5gv4-984h']);
    // The dataset stamp is recorded with each import, and the validators with it (in the database,
    // so a restarted process sends them too).
    const dataset = osvStamp(await advisoryDatasetStamp(database.db));
    expect(first.dataset).toBe(dataset);
    const [npmState] = (await database.db.select().from(advisorySync)).filter((r) => r.ecosystem === 'npm');
    expect(npmState).toMatchObject({
      etag: mirror.etagOf('npm'),
      datasetStamp: expect.any(String),
      error: null,
    });
    expect(mirror.requests.every((r) => r.headers['if-none-match'] === undefined)).toBe(true);

    mirror.requests.length = 0;
    const second = await syncAdvisories(database.db, options());
    expect(second.ecosystems.map((e) => e.outcome)).toEqual([
      'not_modified',
      'not_modified',
      'not_modified',
      'not_modified',
    ]);
    expect(second.imported).toBe(0);
    expect(mirror.requests.find((r) => r.path === '/npm/all.zip')!.headers).toMatchObject({
      'if-none-match': mirror.etagOf('npm'),
      'if-modified-since': expect.stringMatching(/GMT$/),
    });
    // Nothing is left behind in the temporary directory.
    expect(await readdir(tempDir)).toEqual([]);

    // A new export of one ecosystem is downloaded again; the others stay 304.
    await mirror.publish('npm', [MINIMIST, { ...LODASH, modified: '2026-11-20T00:00:00Z' }]);
    const third = await syncAdvisories(database.db, options());
    expect(third.ecosystems.map((e) => [e.outcome, e.import?.imported])).toEqual([
      ['imported', 1],
      ['not_modified', undefined],
      ['not_modified', undefined],
      ['not_modified', undefined],
    ]);
  });

  it('keeps the data it has when the mirror cannot be reached, logs a warning, and the data still ages', async () => {
    await open();
    await mirror.publishAll({ npm: [MINIMIST] });
    await syncAdvisories(database.db, options());
    const before = await advisoryDatasetStamp(database.db);

    const unreachable = `http://127.0.0.1:${await freePort()}`;
    const result = await syncAdvisories(database.db, options(unreachable));
    expect(result.imported).toBe(0);
    expect(result.ecosystems.map((e) => e.outcome)).toEqual(['failed', 'failed', 'failed', 'failed']);
    expect(result.ecosystems[0]!.error).toBe('cannot reach the mirror: ECONNREFUSED');
    expect(warnings).toHaveLength(4);
    expect(warnings[0]).toEqual({
      obj: {
        ecosystem: 'npm',
        url: `${unreachable}/npm/all.zip`,
        reason: 'cannot reach the mirror: ECONNREFUSED',
      },
      msg: 'advisory sync failed; the advisory data already stored is kept',
    });
    expect(await storedIds()).toEqual(['GHSA-xvch-5gv4-984h']);
    expect(await advisoryDatasetStamp(database.db)).toEqual(before);
    // The newest record is from 2024: computed.warnings keeps saying advisories_stale.
    expect(advisoriesStale(before, NOW)).toBe(true);
    // The failure is recorded; the last import's validators stay for the mirror that served it.
    const [npmState] = (await database.db.select().from(advisorySync)).filter((r) => r.ecosystem === 'npm');
    expect(npmState).toMatchObject({
      url: `${mirror.url}/npm/all.zip`,
      etag: mirror.etagOf('npm'),
      error: 'cannot reach the mirror: ECONNREFUSED',
    });

    const status = await syncAdvisories(database.db, { ...options(), baseUrl: `${mirror.url}/missing` });
    expect(status.ecosystems[0]!.error).toBe('the mirror answered 404');
  });

  it('reports a damaged export and writes none of it; the next good export is imported', async () => {
    await open();
    // Stored entries: flipping one byte of the second record breaks only its CRC, so a reader
    // that went entry by entry would have imported the first record before noticing.
    const zip = await exportZip([PYYAML, MINIMIST], false);
    const at = zip.indexOf('"summary"', zip.indexOf('GHSA-xvch-5gv4-984h'));
    zip[at + 12] = zip[at + 12]! ^ 0x20;
    await mirror.publishAll({});
    await mirror.publish('npm', zip);
    const result = await syncAdvisories(database.db, options());
    expect(result.ecosystems[0]).toMatchObject({
      ecosystem: 'npm',
      outcome: 'failed',
      error: 'not a readable zip: GHSA-xvch-5gv4-984h.json does not match its CRC',
    });
    expect(await storedIds()).toEqual([]);
    const [npmState] = (await database.db.select().from(advisorySync)).filter((r) => r.ecosystem === 'npm');
    expect(npmState!.etag).toBeNull();

    // A truncated download (no central directory) fails the same way.
    const whole = await exportZip([PYYAML, MINIMIST]);
    await mirror.publish('npm', whole.subarray(0, whole.length - 40));
    const truncated = await syncAdvisories(database.db, options());
    expect(truncated.ecosystems[0]!.error).toMatch(/^not a readable zip: /);
    expect(await storedIds()).toEqual([]);

    await mirror.publish('npm', whole);
    const good = await syncAdvisories(database.db, options());
    expect(good.ecosystems[0]).toMatchObject({ outcome: 'imported', import: { imported: 2 } });
    expect(mirror.requests.at(-4)!.headers['if-none-match']).toBeUndefined();
  });
});
