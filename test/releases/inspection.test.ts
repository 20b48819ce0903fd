import { eq } from 'drizzle-orm';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Computed } from '../../src/analysis/types.js';
import type { AppContext } from '../../src/context.js';
import { releaseBlobs } from '../../src/db/schema/index.js';
import { inspectRelease } from '../../src/releases/inspection/inspect.js';
import type { InspectionInput } from '../../src/releases/inspection/inspector.js';
import { upsertAdvisories } from '../../src/scan/advisory-store.js';
import { toPublicScan } from '../../src/scan/report.js';
import { BLOCKING_CASES, cleanToolkit } from '../fixtures/corpus.js';
import { buildRepo, type Tree } from '../fixtures/git-repo.js';
import { temporaryBlobStore } from '../support/blobs.js';
import { ManualClock } from '../support/clock.js';
import { BACKENDS, openTestDatabase, type TestDatabase } from '../support/db.js';

const DAY = 86_400_000;
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

async function blobStore() {
  const { blobs, cleanup } = await temporaryBlobStore();
  cleanups.push(cleanup);
  return blobs;
}

async function repo(...trees: Tree[]) {
  const built = await buildRepo(trees);
  cleanups.push(built.cleanup);
  return built;
}

describe.each(BACKENDS)('inspectRelease on %s', (backend) => {
  let database: TestDatabase;
  let ctx: AppContext;
  const clock = new ManualClock();
  const open = async () => {
    database = await openTestDatabase(backend);
    ctx = {
      database,
      clock,
      config: { cutWorkerTimeoutMs: 120_000 },
      blobs: await blobStore(),
    } as unknown as AppContext;
  };
  afterEach(async () => database?.close());

  const input = (
    repoPath: string,
    commit: string,
    extra: Partial<InspectionInput> = {},
  ): InspectionInput => ({
    repoPath,
    commit,
    listing: { id: 'listing-a', owner: 'ada', slug: 'date-tools' },
    version: '1.0.0',
    publishedAt: clock.now(),
    previous: [],
    ...extra,
  });

  // Worker threads boot through tsx under vitest, which takes seconds on a busy machine.
  it('passes the clean toolkit and fills every computed field (worker threads)', {
    timeout: 120_000,
  }, async () => {
    await open();
    const { dir, shas } = await repo(cleanToolkit());
    const result = await inspectRelease(ctx, input(dir, shas[0]!), { workers: 1 });
    expect(result.verdict).toBe('pass');
    expect(result.scan.counts.blocking).toBe(0);
    expect(result.scan.checks.map((c) => [c.id, c.status])).toEqual([
      ['secrets', 'pass'],
      ['limits', 'pass'],
      ['known_vulns', 'pass'],
      ['known_malware', 'pass'],
      ['dep_behaviour', 'findings'],
      ['capabilities', 'findings'],
      ['injection', 'pass'],
    ]);
    expect(result.scan.checks.find((c) => c.id === 'known_vulns')!.packages).toBe(1);
    const c = result.computed;
    expect(c.artifact_class).toBe('Toolkit');
    expect(c.component_inventory).toEqual([
      { kind: 'skill', count: 2 },
      { kind: 'command', count: 1 },
      { kind: 'mcp_server', count: 1 },
      { kind: 'library', count: 1 },
      { kind: 'script', count: 2 },
      { kind: 'test', count: 1 },
      { kind: 'doc', count: 2 },
    ]);
    expect(c.file_count).toBe(14);
    expect(c.dir_depth).toBe(2);
    expect(c.bytes_binary).toBe(16);
    const tree: Computed['tree'] = result.treeParts.flatMap((part) => JSON.parse(part));
    expect(tree).toHaveLength(14);
    expect(tree.find((t) => t.path === 'logo.png')).toEqual({ path: 'logo.png', size: 16, binary: true });
    expect(c.bytes_text + c.bytes_binary).toBe(tree.reduce((n, t) => n + t.size, 0));
    expect(Object.keys(c.languages).sort()).toEqual(['JavaScript', 'TypeScript']);
    expect(c.lines_of_code).toBeGreaterThan(5);
    expect(c.extensions).toMatchObject({ '.md': 5, '.json': 3, '.ts': 2, '.js': 2, '(none)': 1, '.png': 1 });
    expect(c.licence).toEqual({ spdx: 'MIT', verdict: 'matched' });
    expect(c.dependencies).toEqual([
      {
        ecosystem: 'npm',
        name: 'lodash',
        version: '4.17.21',
        direct: true,
        dev: false,
        source: 'package-lock.json',
      },
    ]);
    expect(c.cadence).toMatchObject({
      releases: 1,
      median_days_between_releases: null,
      finished: true,
      days_since_last: 0,
    });
    expect(c.cadence_sentence).toMatch(/^First release\. The author marks it finished/);
    expect(c.inventory_sentence).toMatch(/^Toolkit: 2 skills, 1 command, 1 MCP server, .* in 14 files/);
    expect(c.engineering).toMatchObject({ code_files: 4, test_files: 1, padding_suspected: false });
    expect(c.engineering.effective_code_lines).toBeGreaterThan(0);
    // The built-in seed is the only advisory data here, and its newest record is months old.
    expect(c.warnings).toEqual(['advisories_stale']);
    expect(c.analyzer_version).toBe(result.analyzerVersion);
    expect(c.computed_at).toBe(clock.now().toISOString());
    expect(c.repo_meta).toBeNull();

    const caps = result.scan.capabilities;
    expect(caps.env).toEqual([{ name: 'DATES_TOKEN', paths: ['src/server.ts'] }]);
    expect(caps.hosts).toEqual(
      expect.arrayContaining(
        [
          { host: 'api.holidays.test-data.io', local: false, from: 'code', paths: ['src/server.ts'] },
          { host: 'localhost', local: true, from: 'code', paths: ['src/server.ts'] },
          { host: 'dates.example.org', local: false, from: 'docs', paths: ['README.md'] },
        ].filter((h) => h.host !== 'dates.example.org'),
      ),
    );
    expect(caps.tools).toEqual(['git']);
    expect(caps.install_runs).toBe(true);
    expect(caps.runs).toEqual([
      'npm postinstall: node scripts/setup.js',
      'mcp server dates: node src/server.js',
    ]);
    expect(caps.summary).toMatch(
      /^Contacts 1 host \(api\.holidays\.test-data\.io\), reads 1 environment variable, runs git and runs code at install\.$/,
    );
    // The file that reads an env var and calls a remote host is put up for review.
    expect(result.scan.findings.find((f) => f.rule_id === 'env-and-network')).toMatchObject({
      tier: 'review',
      path: 'src/server.ts',
    });
    expect(result.scan.counts.review).toBe(1);

    const sbom = JSON.parse(result.sbom!);
    expect(sbom).toMatchObject({ bomFormat: 'CycloneDX', specVersion: '1.5' });
    expect(sbom.components.map((x: { purl: string }) => x.purl)).toEqual(['pkg:npm/lodash@4.17.21']);
    expect(result.diffSummary).toMatchObject({
      files_added: 14,
      files_changed: 0,
      files_removed: 0,
      deletions: 0,
    });
    expect(result.diffSummary.components_touched).toEqual(
      expect.arrayContaining(['skill:format-dates', 'command:today', 'mcp_server:dates', 'tests', 'docs']),
    );
  });

  it('renders the README inert: no script, no javascript: links, no raw HTML, relative links and images dropped', async () => {
    await open();
    const { dir, shas } = await repo(cleanToolkit());
    const html = (await inspectRelease(ctx, input(dir, shas[0]!), { workers: 0 })).computed.readme_html;
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/href="javascript:/i);
    expect(html).toContain('&lt;script&gt;');
    expect(html).not.toContain('logo.png');
    expect(html).not.toContain('docs/usage.md');
    expect(html).toContain('the usage guide');
    expect(html).toContain(
      '<a href="https://dates.example.org/guide" rel="nofollow noopener noreferrer ugc">the site</a>',
    );
    expect(html).toContain('<img src="https://img.shields.io/badge/x-y-green"');
  });

  it.each(BLOCKING_CASES)('fails on $name, naming path and line', async (testCase) => {
    await open();
    const { dir, shas } = await repo(testCase.tree());
    const result = await inspectRelease(ctx, input(dir, shas[0]!), { workers: 0 });
    expect(result.verdict).toBe('fail');
    expect(result.scan.verdict).toBe('fail');
    const blocking = result.scan.findings.filter((f) => f.tier === 'blocking');
    expect(blocking).toEqual([expect.objectContaining({ ...testCase.expect, tier: 'blocking' })]);
    expect(result.scan.counts.blocking).toBe(1);
    expect(result.scan.checks.find((c) => c.id === testCase.expect.check)!.status).toBe('fail');
    expect(result.scan.checks.filter((c) => c.status === 'fail')).toHaveLength(1);
  });

  it('keeps secret locations out of the public scan', async () => {
    await open();
    const { dir, shas } = await repo(BLOCKING_CASES[0]!.tree());
    const result = await inspectRelease(ctx, input(dir, shas[0]!), { workers: 0 });
    const secret = result.scan.findings.find((f) => f.kind === 'secret')!;
    expect(secret.hint).toMatch(/^ghp_…\(40 chars\)$/);
    const publicScan = toPublicScan(result.scan);
    const shown = publicScan.findings.find((f) => f.kind === 'secret')!;
    expect(shown).not.toHaveProperty('path');
    expect(shown).not.toHaveProperty('line');
    expect(shown).not.toHaveProperty('hint');
    expect(publicScan.findings.every((f) => !('line' in f))).toBe(true);
    expect(publicScan.counts).toEqual(result.scan.counts);
  });

  it('blocks the hostile paths of issue 13: escaping links, backslashes, control and bidi characters in names', async () => {
    await open();
    const { dir, shas } = await repo({
      'README.md': '# Hostile\n',
      'docs/guide.md': 'Guide\n',
      passwd: { symlink: '/etc/passwd' },
      shadow: { symlink: '../../../../etc/shadow' },
      root: { symlink: '/' },
      latest: { symlink: 'docs/guide.md' },
      'back\\..\\..\\win-evil.bat': 'echo evil\n',
      'invoice\u202egnp.exe': 'not really\n',
      'notes\nforged.txt': 'forged\n',
    });
    const result = await inspectRelease(ctx, input(dir, shas[0]!), { workers: 0 });
    expect(result.verdict).toBe('fail');
    const shown = (tier: string) =>
      result.scan.findings
        .filter((f) => f.tier === tier)
        .map((f) => [f.check, f.rule_id, f.path])
        .sort((a, b) => `${a}`.localeCompare(`${b}`));
    expect(shown('blocking')).toEqual([
      ['injection', 'path-bidi-control', 'invoice\\u202egnp.exe'],
      ['injection', 'path-control-character', 'notes\\nforged.txt'],
      ['limits', 'path-backslash', 'back\\\\..\\\\..\\\\win-evil.bat'],
      ['limits', 'symlink-escape', 'passwd'],
      ['limits', 'symlink-escape', 'root'],
      ['limits', 'symlink-escape', 'shadow'],
    ]);
    expect(shown('disclosed').filter(([, rule]) => rule === 'symlink')).toEqual([
      ['limits', 'symlink', 'latest'],
      ['limits', 'symlink', 'passwd'],
      ['limits', 'symlink', 'root'],
      ['limits', 'symlink', 'shadow'],
    ]);
    expect(
      result.scan.findings.find((f) => f.rule_id === 'symlink' && f.path === 'shadow')!.description,
    ).toBe('Symlink to ../../../../etc/shadow');
    expect(result.scan.checks.filter((c) => c.status === 'fail').map((c) => c.id)).toEqual([
      'limits',
      'injection',
    ]);
    // Public and private reports alike show no raw control or bidi character in any path.
    for (const finding of toPublicScan(result.scan).findings)
      expect(finding.path ?? '').not.toMatch(/[\p{Cc}\u202a-\u202e\u2066-\u2069]/u);
  });

  it('refuses an unknown commit and an unknown previous commit without recording anything', async () => {
    await open();
    const { dir, shas } = await repo({
      'a.md': `# A\n\n${'A paragraph long enough to be recorded as a blob. '.repeat(3)}\n`,
    });
    await expect(inspectRelease(ctx, input(dir, 'f'.repeat(40)), { workers: 0 })).rejects.toThrow(
      /git ls-tree failed/,
    );
    const previous = [{ version: '0.1.0', commitSha: 'e'.repeat(40), publishedAt: clock.now() }];
    await expect(inspectRelease(ctx, input(dir, shas[0]!, { previous }), { workers: 0 })).rejects.toThrow(
      /git diff failed/,
    );
    expect(await database.db.select().from(releaseBlobs)).toHaveLength(0);
  });

  it('warns sbom_unavailable when no manifest can be read', async () => {
    await open();
    const { dir, shas } = await repo({ 'notes.md': '# Notes\n', 'package.json': '{ not json' });
    const result = await inspectRelease(ctx, input(dir, shas[0]!), { workers: 0 });
    expect(result.sbom).toBeNull();
    expect(result.computed.warnings).toEqual(['sbom_unavailable']);
    expect(result.computed.licence).toEqual({ spdx: 'NONE', verdict: 'missing' });
    expect(result.computed.artifact_class).toBe('Documentation');
    expect(result.verdict).toBe('pass');
  });

  it('warns advisories_stale until current advisory data arrives, and no_lockfile for unresolved dependencies', async () => {
    await open();
    const { dir, shas } = await repo({
      'index.js': 'module.exports = 1;\n',
      'package.json': JSON.stringify({ name: 'x', version: '1.0.0', dependencies: { lodash: '^4.17.0' } }),
    });
    const before = await inspectRelease(ctx, input(dir, shas[0]!), { workers: 0 });
    expect(before.computed.warnings).toEqual(['no_lockfile', 'advisories_stale']);
    expect(before.scan.checks.find((c) => c.id === 'known_vulns')!.packages).toBe(0);
    await upsertAdvisories(
      database.db,
      [{ id: 'GHSA-fresh-0000-0000', modified: clock.now().toISOString(), affected: [] }],
      clock.now(),
    );
    const after = await inspectRelease(ctx, input(dir, shas[0]!), { workers: 0 });
    expect(after.computed.warnings).toEqual(['no_lockfile']);
  });

  it('summarises the diff against the previous release and measures cadence', async () => {
    await open();
    const v1 = cleanToolkit();
    const { 'docs/usage.md': _removed, ...rest } = v1;
    const v2: Tree = {
      ...rest,
      'skills/format-dates/SKILL.md':
        '---\nname: format-dates\ndescription: Formats dates in any locale.\n---\n\nUse `date-tools format --tz`.\nNow with zones.\n',
      'test/parse.test.ts': "import { it } from 'vitest';\nit('parses', () => {});\n",
    };
    const { dir, shas } = await repo(v1, v2);
    const t0 = clock.now();
    const result = await inspectRelease(
      ctx,
      input(dir, shas[1]!, {
        version: '1.1.0',
        publishedAt: new Date(t0.getTime() + 14 * DAY),
        previous: [{ version: '1.0.0', commitSha: shas[0]!, publishedAt: t0 }],
      }),
      { workers: 0 },
    );
    expect(result.diffSummary).toEqual({
      files_added: 1,
      files_changed: 1,
      files_removed: 1,
      additions: 4,
      deletions: 4,
      // The removed guide's folder is no longer a component, so the root package owns the removal.
      components_touched: ['library:date-tools', 'skill:format-dates', 'tests'],
    });
    expect(result.computed.cadence).toMatchObject({
      releases: 2,
      median_days_between_releases: 14,
      on_time_fraction: null,
      score: null,
    });
    expect(result.computed.cadence_sentence).toMatch(/^2 releases, a median of 14 days apart\./);
  });

  it('records blobs idempotently and names a >= 90% copy of another listing as derivative', async () => {
    await open();
    const original = cleanToolkit();
    const { dir: a, shas: aShas } = await repo(original);
    const first = await inspectRelease(ctx, input(a, aShas[0]!), { workers: 0 });
    expect(first.computed.originality).toEqual({
      blob_overlap_ratio: 0,
      blobs_seen_elsewhere: 0,
      blobs_total: 12,
      nearest_listing: null,
      derivative_of: null,
    });
    // A retried cut of the same version records nothing twice.
    await inspectRelease(ctx, input(a, aShas[0]!), { workers: 0 });
    expect(await database.db.select().from(releaseBlobs)).toHaveLength(12);

    clock.advance(DAY);
    const copy = {
      ...original,
      'docs/usage.md': '# Usage\n\nRenamed and lightly edited so it is not byte-identical.\n',
    };
    const { dir: b, shas: bShas } = await repo(copy);
    const copied = await inspectRelease(
      ctx,
      input(b, bShas[0]!, {
        listing: { id: 'listing-b', owner: 'bob', slug: 'dates' },
        publishedAt: clock.now(),
      }),
      { workers: 0 },
    );
    expect(copied.computed.originality).toEqual({
      blob_overlap_ratio: 0.917,
      blobs_seen_elsewhere: 11,
      blobs_total: 12,
      nearest_listing: 'ada/date-tools',
      derivative_of: 'ada/date-tools',
    });

    // The original's next release is not called a copy of the later listing.
    clock.advance(DAY);
    const next = await inspectRelease(
      ctx,
      input(a, aShas[0]!, { version: '1.0.1', publishedAt: clock.now() }),
      { workers: 0 },
    );
    expect(next.computed.originality.derivative_of).toBeNull();
    expect(next.computed.originality.blobs_seen_elsewhere).toBe(0);
    expect(next.computed.originality.blobs_total).toBe(12);
    // Its blobs were recorded with 1.0.0: the next release writes no row again.
    const rowsOfA = await database.db
      .select()
      .from(releaseBlobs)
      .where(eq(releaseBlobs.listingId, 'listing-a'));
    expect(rowsOfA).toHaveLength(12);

    // Half the files copied: reported as nearest, not derivative.
    const half = Object.fromEntries(
      Object.entries(original).filter(
        ([p]) => p.startsWith('skills/') || p === 'LICENSE' || p === 'README.md',
      ),
    );
    const { dir: c, shas: cShas } = await repo({
      ...half,
      'src/own.ts': 'export const own = "a file written for this listing alone, long enough to count";\n',
      'src/more.ts': 'export const more = "another original file that no other listing has recorded yet";\n',
      'src/third.ts':
        'export const third = "a third original file so that the copied share stays below ninety";\n',
    });
    const partial = await inspectRelease(
      ctx,
      input(c, cShas[0]!, {
        listing: { id: 'listing-c', owner: 'cy', slug: 'halves' },
        publishedAt: clock.now(),
      }),
      { workers: 0 },
    );
    expect(partial.computed.originality.nearest_listing).toBe('ada/date-tools');
    expect(partial.computed.originality.derivative_of).toBeNull();
    expect(partial.computed.originality.blob_overlap_ratio).toBeLessThan(0.9);
  });
});
