import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { attestationOf, keysDocument } from '../../src/attestations/service.js';
import { listingById } from '../../src/listings/service.js';
import { requestCut } from '../../src/releases/cut/claims.js';
import { runCut } from '../../src/releases/cut/run.js';
import { findRelease } from '../../src/releases/store.js';
import { registerCreator } from '../identity/support.js';
import { createHostedListing, type SshKey, sshKeygen } from '../listings/support.js';
import { commitFile, workRepo } from '../releases/support.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { PGLITE_ONLY } from '../support/db.js';
import { type StatementJson, specVerify } from './support.js';

let key: SshKey;
beforeAll(async () => {
  key = await sshKeygen('ed25519');
});

/** The cut itself attests: a passing release, and one refused for a limit before any zip was made. */
describe.each(PGLITE_ONLY)('the release cut attests every release it makes final (%s)', (backend) => {
  let t: TestApp;
  beforeEach(async () => {
    // Trees deeper than 3 are refused; no workers: the test runs the cut as a worker would.
    t = await createTestApp({ backend, env: { TREE_MAX_DEPTH: '3' } });
  });
  afterEach(async () => t.close());

  async function cutOf(files: Record<string, string>, version: string) {
    const creator = await registerCreator(t);
    const created = await createHostedListing(t, creator.apiKey, key.publicKey);
    const work = await workRepo();
    let commit = '';
    for (const [name, content] of Object.entries(files)) commit = await commitFile(work, name, content, name);
    await work.git('push', '-q', path.join(t.dataDir, 'repos', created.owner, `${created.slug}.git`), 'main');
    const listing = (await listingById(t.ctx.database.db, created.id))!;
    const cut = await requestCut(t.ctx, listing, {
      version,
      tag: `v${version}`,
      commitSha: commit,
      trigger: 'sync',
    });
    await runCut(t.ctx, cut!.id, { finalAttempt: false });
    const release = (await findRelease(t.ctx.database.db, listing.id, version))!;
    const tree = (await work.git('rev-parse', `${commit}^{tree}`)).trim();
    // The listing is a draft: its attestation is read from the store, as the route would once published.
    return {
      listing,
      release,
      commit,
      tree,
      envelope: (await attestationOf(t.ctx.database.db, release.id))!,
      keys: await keysDocument(t.ctx.database.db),
    };
  }

  it('attests a passing release with its zip, commit and tree', async () => {
    const { listing, release, commit, tree, envelope, keys } = await cutOf(
      { 'README.md': '# tools\n' },
      '1.0.0',
    );
    expect(release.verdict).toBe('pass');
    const zip = await t.ctx.blobs.open(release.artifactKey!);
    const chunks: Buffer[] = [];
    for await (const chunk of zip.stream) chunks.push(chunk as Buffer);
    const checked = specVerify(envelope, keys, Buffer.concat(chunks));
    expect(checked.ok, JSON.stringify(checked)).toBe(true);
    const { statement } = checked as { statement: StatementJson };
    expect(statement.subject).toEqual([
      { name: `${listing.slug}-1.0.0.zip`, digest: { sha256: release.artifactSha256 } },
    ]);
    expect(statement.predicate).toMatchObject({
      commit_sha: commit,
      tree_sha: tree,
      scan: { verdict: 'pass', scanner_version: release.scannerVersion },
      analyzer_version: release.analyzerVersion,
      diff_summary: release.diffSummary,
    });
  });

  it('attests a release refused for a limit: no zip, so the subject is the tagged commit', async () => {
    const { listing, release, commit, tree, envelope } = await cutOf(
      { 'a/b/c/d/deep.txt': 'deep\n' },
      '1.0.0',
    );
    expect(release).toMatchObject({ verdict: 'fail', artifactSha256: null });
    const statement = JSON.parse(Buffer.from(envelope.payload, 'base64').toString('utf8'));
    expect(statement.subject).toEqual([
      { name: `${listing.owner}/${listing.slug}@v1.0.0`, digest: { gitCommit: commit } },
    ]);
    expect(statement.predicate).toMatchObject({
      artifact: null,
      tree_sha: tree,
      scan: { verdict: 'fail', counts: { blocking: 1, disclosed: 0, review: 0 } },
    });
    // No release is final without its attestation.
    const unattested = await t.ctx.database.db.execute(
      sql`select count(*)::int as n from releases r where r.verdict <> 'pending' and not exists (select 1 from release_attestations a where a.release_id = r.id)`,
    );
    expect((unattested as unknown as { rows: Array<{ n: number }> }).rows[0]!.n).toBe(0);
  });
});
